"""The schedule and the probe worker: claim due checks, run region batches, record what they found.

``scheduling`` claims due slots, ``execution`` runs a region's batch through the engine and
hands the outcomes to ``monitors.services.outcomes_record``; ``tasks`` wraps both for Celery,
``embedded`` runs them in one process when there is no broker.
"""
