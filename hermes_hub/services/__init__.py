"""The person's services over the store: sealed secrets, the audit trail, sessions, identity,
long-term memory and evaluation case sets. They use only ``infra``."""
