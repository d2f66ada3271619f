"""The batch/v1 API group: Jobs and CronJobs: strategies, validation, defaults (and robfig/cron's schedule parser).

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`, the rest of :mod:`fakeapi.registry`.
"""
