"""A key pasted into a monitor's URL is found (and taken out), so every way in can refuse it."""

from __future__ import annotations

import pytest

from probes.urlkeys import is_key_param, key_in_url, key_in_url_words, without_key


@pytest.mark.parametrize(
    ("url", "found"),
    [
        ("https://mcp.example.com/mcp", None),
        ("https://mcp.example.com/mcp?region=eu&page=2", None),
        ("https://user:secret@mcp.example.com/mcp", "a user name or password"),
        ("https://token@mcp.example.com/mcp", "a user name or password"),
        ("https://mcp.example.com/mcp?key=abc", "the query parameter key"),
        ("https://mcp.example.com/mcp?token=abc", "the query parameter token"),
        ("https://mcp.example.com/mcp?api_key=abc", "the query parameter api_key"),
        ("https://mcp.example.com/mcp?apiKey=abc", "the query parameter apiKey"),
        ("https://mcp.example.com/mcp?api-key=abc", "the query parameter api-key"),
        ("https://mcp.example.com/mcp?access_token=abc", "the query parameter access_token"),
        ("https://mcp.example.com/mcp?x_api_key=abc", "the query parameter x_api_key"),
        ("https://mcp.example.com/mcp?client_secret=abc", "the query parameter client_secret"),
        ("https://mcp.example.com/mcp?tokenizer=bpe", None),
        ("https://mcp.example.com/mcp?monkey=1", None),
        ("not a url at all", None),
    ],
)
def test_a_key_in_a_url_is_named_by_where_it_is(url, found):
    assert key_in_url(url) == found


@pytest.mark.parametrize(
    ("url", "keyless"),
    [
        ("https://user:secret@mcp.example.com/mcp", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com/mcp?token=abc&region=eu", "https://mcp.example.com/mcp?region=eu"),
        ("https://mcp.example.com:8443/mcp?api_key=abc", "https://mcp.example.com:8443/mcp"),
    ],
)
def test_the_url_without_its_key_keeps_everything_else(url, keyless):
    assert without_key(url) == keyless


# Real-world names of query parameters that carry a credential, from the SDKs and vendors that use them.
CREDENTIALS = [
    "key",  # Google APIs (Maps, YouTube Data, Gemini): ?key=API_KEY
    "api_key",  # OpenWeather, NASA, Smithery
    "apiKey",  # many MCP gateways
    "apikey",  # Alpha Vantage
    "APIKEY",
    "api-key",  # Azure OpenAI
    "x-api-key",
    "X-API-Key",
    "x_api_key",
    "access_token",  # RFC 6750 §2.3, Facebook Graph, GitHub (old)
    "accessToken",
    "access-token",
    "token",  # Telegram-style, many webhooks
    "auth_token",  # Twilio-style
    "authToken",
    "api_token",  # Pipedrive, Todoist
    "apiToken",
    "id_token",  # OpenID Connect
    "idToken",
    "refresh_token",
    "sessionToken",
    "session_token",
    "X-Amz-Security-Token",  # AWS presigned URLs with STS credentials
    "X-Amz-Signature",  # AWS SigV4 presigned URLs
    "X-Amz-Credential",
    "X-Goog-Signature",  # Google Cloud Storage signed URLs
    "Signature",  # S3 SigV2 presigned URLs
    "sig",  # Azure SAS
    "signature",
    "hmac",  # Shopify
    "client_secret",  # OAuth 2
    "clientSecret",
    "secret",
    "app_secret",
    "secret_id",  # Vault AppRole
    "privateKey",
    "private_key",
    "secret_key",
    "secretKey",
    "access_key",
    "accessKey",
    "subscription-key",  # Azure API Management
    "Ocp-Apim-Subscription-Key",
    "user_key",  # 3scale
    "app_key",  # Datadog
    "application_key",
    "license_key",
    "write_key",  # Segment
    "sdk_key",  # LaunchDarkly
    "routing_key",  # PagerDuty Events v2
    "auth",  # Firebase REST
    "authorization",
    "password",
    "passwd",
    "pwd",
    "pass",
    "hub.verify_token",  # Meta webhooks
    "jwt",
    "bearer",
    "tavilyApiKey",  # Tavily's hosted MCP server
    "exaApiKey",  # Exa's hosted MCP server
    "githubPersonalAccessToken",
    "accesstoken",
    "clientsecret",
    "authkey",
    "basic_auth",
]
# Names that look close and are no secret: they must pass.
NOT_CREDENTIALS = [
    "keyword",  # a search term
    "keywords",
    "monkey",
    "hotkey",
    "author",  # a person
    "author_id",
    "authMode",  # says how to sign in, holds no secret
    "auth_type",
    "tokenizer",
    "max_tokens",  # a count
    "maxTokens",
    "page",
    "sort",
    "q",
    "region",
    "keys",  # a list of names to look up
    "sort_key",  # an ordering: which field to sort by
    "cache_key",  # a cache entry's name
    "primary_key",  # a database row's id
    "partition_key",
    "idempotency_key",  # a request's id for retries, not a credential
    "public_key",  # the public half, meant to be shown
    "publishable_key",  # Stripe's pk_: designed to sit in a page
    "key_id",  # names which key, holds none of it
    "pageToken",  # Google APIs' pagination cursor
    "page_token",
    "nextPageToken",
    "next_token",  # AWS's NextToken
    "NextToken",
    "continuationToken",
    "sync_token",
    "token_type",
    "api-version",  # Azure
    "api_version",
    "SignatureVersion",  # AWS SigV2: the scheme's version, not the signature
    "SignatureMethod",
    "X-Amz-Algorithm",
    "X-Amz-Date",
    "X-Amz-SignedHeaders",
    "sv",  # Azure SAS: the service version
    "client_id",  # a public identifier in OAuth
    "redirect_uri",
    "state",
    "scope",
    "bypass",
    "oauth",
]


@pytest.mark.parametrize("name", CREDENTIALS)
def test_a_parameter_named_for_a_credential_is_a_key(name):
    assert is_key_param(name)


@pytest.mark.parametrize("name", NOT_CREDENTIALS)
def test_a_parameter_that_only_looks_like_one_is_not(name):
    assert not is_key_param(name)


def test_the_refusal_says_where_the_key_is_and_where_it_goes():
    assert key_in_url_words("https://mcp.example.com/mcp?region=eu&accessToken=sk-9") == (
        "It carries a key (the query parameter accessToken): a URL is stored and shown in clear. Leave it "
        "out (https://mcp.example.com/mcp?region=eu) and send the key as a request header, which is stored "
        "encrypted."
    )
