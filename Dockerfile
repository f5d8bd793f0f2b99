# syntax=docker/dockerfile:1
#
# One image for every Uptimy process. The default command serves the web app and the API with
# gunicorn; the same image runs the other parts with a different command:
#
#   docker run IMAGE                                        # web (gunicorn on 0.0.0.0:8000)
#   docker run IMAGE celery -A uptimy worker -Q probes.eu-west --loglevel INFO
#   docker run IMAGE celery -A uptimy beat --loglevel INFO --schedule /var/lib/uptimy/celerybeat-schedule
#   docker run IMAGE python manage.py migrate --noinput
#
# Configuration comes only from the environment (see docker-compose.yml for the block).

# The builder and the runtime must share one base image: the virtualenv copied between them
# points at the interpreter by absolute path (/usr/local/bin/python).
ARG PYTHON_IMAGE=python:3.11-slim

# ---------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

# A compiler only for a dependency that ships no wheel for the target platform; it stays in
# this stage and never reaches the runtime image.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential \
    && rm -rf /var/lib/apt/lists/*

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

WORKDIR /src

# Dependencies get their own layer, keyed on the run lock alone, so an edit to the code does
# not reinstall them. The same pinned, hash-checked set `make run` installs; only the runtime
# lock: the dev tools (pytest, ruff, the MCP SDK peers) have no business in a production image.
COPY requirements/run.txt /tmp/requirements.txt
# hadolint ignore=DL3042
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install --require-hashes -r /tmp/requirements.txt

# ---------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS runtime

# PYTHONPATH: the code runs from /app rather than being installed into the venv, so that
# templates, static files and migrations travel with it whatever the packaging metadata says,
# and `celery -A uptimy` finds the package from any working directory.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONPATH=/app \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    STATIC_ROOT=/app/staticfiles \
    UPTIMY_VAR_DIR=/var/lib/uptimy \
    WEB_CONCURRENCY=2

# A fixed uid/gid so that volumes and Kubernetes securityContext can name them.
RUN groupadd --system --gid 10001 uptimy \
    && useradd --system --uid 10001 --gid uptimy --home-dir /var/lib/uptimy --no-create-home \
        --shell /usr/sbin/nologin uptimy \
    && install -d -o uptimy -g uptimy -m 0750 /var/lib/uptimy

COPY --from=builder /opt/venv /opt/venv

WORKDIR /app
# Owned by root and so read-only for the process user: a compromised process cannot rewrite
# the code it runs. Only UPTIMY_VAR_DIR (/var/lib/uptimy) is writable.
COPY . /app

# Static assets are baked in at build time (WhiteNoise serves them from STATIC_ROOT). Settings
# refuse to load without the two keys; throwaway values exist for this one RUN only and are
# not persisted in the image's environment. collectstatic opens no database connection.
RUN SECRET_KEY=collectstatic-build-only \
    UPTIMY_SECRETS_KEY=collectstatic-build-only \
    python manage.py collectstatic --noinput --verbosity 0 \
    && python -m compileall -q /app

# Numeric, so that Kubernetes runAsNonRoot can verify it without reading /etc/passwd.
USER 10001:10001

EXPOSE 8000

# Uses Python rather than curl: the slim image has no curl and adding one only for this would
# grow the attack surface. Django checks the Host header, so ALLOWED_HOSTS must include
# 127.0.0.1 for this probe to get past it. Worker and beat containers override or disable it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]

# --worker-tmp-dir: gunicorn's heartbeat files on tmpfs, so a slow container disk cannot make
# the arbiter think its workers hung. Gunicorn also reads WEB_CONCURRENCY (workers) and
# FORWARDED_ALLOW_IPS (the reverse proxy to trust) from the environment.
# --config python:uptimy.gunicorn_conf: the hooks that drop a dead worker's metrics (see README "Metrics") and
# freeze what a worker loaded at start out of the garbage collector's sight.
# uptimy.asgi with uvicorn's worker: /mcp (Uptimy's MCP server, the official SDK) is ASGI.
CMD ["gunicorn", "uptimy.asgi:application", \
     "--worker-class", "uvicorn_worker.UvicornWorker", \
     "--config", "python:uptimy.gunicorn_conf", \
     "--bind", "0.0.0.0:8000", \
     "--worker-tmp-dir", "/dev/shm", \
     "--access-logfile", "-", \
     "--error-logfile", "-"]
