"""Scheduled agent runs (issue 24): schedules, their occurrences, the firing loop, the inbox and webhooks.

    book = Schedules(store, config, clock)             # what the tools and `hermes-hub schedules` use
    scheduler = Scheduler(store, clock, fire, ...)     # plans due occurrences, claims one, runs it, tells the person
"""

from hermes_hub.core.schedules.book import Schedules
from hermes_hub.core.schedules.clock import Clock, ManualClock, clock_from_env
from hermes_hub.core.schedules.inbox import Inbox
from hermes_hub.core.schedules.scheduler import Scheduler

__all__ = ["Clock", "Inbox", "ManualClock", "Schedules", "Scheduler", "clock_from_env"]
