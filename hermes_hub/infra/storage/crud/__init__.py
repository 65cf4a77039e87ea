"""What both backends do alike: each ``Store`` method picks its dialect's SQL function and a runner.

``SharedMethods`` is every such method; ``SQLiteStore`` and ``PostgresStore`` mix it in, name their
SQL (``runner.Dialect``) and supply ``_read``/``_write``. What really differs stays in the stores:
connections and transactions, and which rows an indexing batch holds (leases).
"""

from hermes_hub.infra.storage.crud.approvals import ApprovalMethods
from hermes_hub.infra.storage.crud.artifacts import ArtifactMethods
from hermes_hub.infra.storage.crud.audit import AuditMethods
from hermes_hub.infra.storage.crud.counters import CounterMethods
from hermes_hub.infra.storage.crud.eval_cases import EvalCaseMethods
from hermes_hub.infra.storage.crud.documents import DocumentMethods
from hermes_hub.infra.storage.crud.indexing import IndexMethods
from hermes_hub.infra.storage.crud.jobs import ExtractionMethods, SummaryMethods
from hermes_hub.infra.storage.crud.logins import LoginMethods
from hermes_hub.infra.storage.crud.oauth import OAuthMethods
from hermes_hub.infra.storage.crud.oauth_upkeep import OAuthUpkeepMethods
from hermes_hub.infra.storage.crud.memories import MemoryMethods, RecallMethods
from hermes_hub.infra.storage.crud.pins import PinMethods
from hermes_hub.infra.storage.crud.provenance import ProvenanceMethods, WorkingMethods
from hermes_hub.infra.storage.crud.runner import Dialect, Runner
from hermes_hub.infra.storage.crud.runs import RunMethods
from hermes_hub.infra.storage.crud.schedules import ScheduleMethods
from hermes_hub.infra.storage.crud.sealed import SealedMethods
from hermes_hub.infra.storage.crud.sessions import MessageMethods, SessionLockMethods, SessionMethods
from hermes_hub.infra.storage.crud.tokens import TokenMethods

__all__ = ["Dialect", "Runner", "SharedMethods"]


class SharedMethods(SessionMethods, MessageMethods, SessionLockMethods, TokenMethods, LoginMethods, AuditMethods,
                    RunMethods, OAuthMethods, MemoryMethods, RecallMethods, IndexMethods, ExtractionMethods, SummaryMethods,
                    SealedMethods, PinMethods, ArtifactMethods,
                    ApprovalMethods,
                    CounterMethods,
                    EvalCaseMethods,
                    ScheduleMethods,
                    DocumentMethods,
                    ProvenanceMethods,
                    WorkingMethods,
                    OAuthUpkeepMethods,
                    ):
    """Every method of ``Store`` whose two backends differ only in the SQL they run."""
