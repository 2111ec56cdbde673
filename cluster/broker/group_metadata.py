"""A consumer group's membership and state (Kafka 2.8's `GroupMetadata`, `MemberMetadata`, `GroupState`).

The state machine is data: `GroupState` and `VALID_PREVIOUS_STATES`, Kafka's table. A transition outside
it is a logic error of the coordinator and raises `IllegalStateError` (Kafka's `IllegalStateException`).

    Empty ──join──▶ PreparingRebalance ──all joined / timeout──▶ CompletingRebalance ──leader's sync──▶ Stable
      ▲                 │   ▲                                          │                                  │
      └── no members ───┘   └──── join / leave / member expiry ────────┴──────────────────────────────────┘
    any state ──unload / delete──▶ Dead

Members wait for their JoinGroup/SyncGroup answers through callbacks (Kafka's `awaitingJoinCallback`,
`awaitingSyncCallback`): the coordinator's handlers pass one that completes the request's future. The
offsets a group committed are not here: `__consumer_offsets`' cache is the GroupMetadataManager's.

Threads: the broker's event loop only (Kafka's `@nonthreadsafe`, used under the group's lock).
"""

from __future__ import annotations

import enum
import struct
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafkaops.cluster.common import errors

CONSUMER_PROTOCOL_TYPE = "consumer"
"""`ConsumerProtocol.PROTOCOL_TYPE`: the groups whose subscriptions the coordinator may read."""

UNKNOWN_MEMBER_ID = ""
"""`JoinGroupRequest.UNKNOWN_MEMBER_ID`: a member that has no id yet."""

NO_GENERATION = -1
NO_LEADER = ""
NO_PROTOCOL = ""
NO_PROTOCOL_TYPE = ""
NO_STATE = ""

Protocols = list[tuple[str, bytes]]
"""A member's supported protocols (name, metadata), in its order of preference."""


class IllegalStateError(Exception):
    """Kafka's `IllegalStateException` in the group code: the coordinator broke the state machine."""


class GroupState(enum.Enum):
    """Kafka's group states; the value is the name Kafka prints and sends (ListGroups, DescribeGroups)."""

    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"
    EMPTY = "Empty"

    def __str__(self) -> str:
        return self.value


VALID_PREVIOUS_STATES: Mapping[GroupState, frozenset[GroupState]] = {
    GroupState.PREPARING_REBALANCE: frozenset({GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(GroupState),
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
}
"""Kafka's `validPreviousStates` of each state."""


@dataclass(frozen=True, slots=True)
class JoinGroupResponseMember:
    """One member as the leader's JoinGroup answer lists it (its metadata for the chosen protocol)."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True, slots=True)
class JoinGroupResult:
    """Kafka's `JoinGroupResult`: what a JoinGroup is answered with."""

    member_id: str
    error: int
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = NO_LEADER
    members: tuple[JoinGroupResponseMember, ...] = ()


@dataclass(frozen=True, slots=True)
class SyncGroupResult:
    """Kafka's `SyncGroupResult`."""

    error: int
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(frozen=True, slots=True)
class JoinRequest:
    """A JoinGroup as the coordinator takes it (Kafka's `handleJoinGroup` arguments).
    `require_known_member_id`: v4+ without group.instance.id, answered MEMBER_ID_REQUIRED first."""

    group_id: str
    member_id: str
    group_instance_id: str | None
    require_known_member_id: bool
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols

    def protocol_names(self) -> set[str]:
        return {name for name, _ in self.protocols}


@dataclass(frozen=True, slots=True)
class MemberIdentity:
    """A member named by a LeaveGroup (v3+ names several)."""

    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class LeaveMemberResponse:
    member_id: str
    group_instance_id: str | None
    error: int


@dataclass(frozen=True, slots=True)
class LeaveGroupResult:
    top_level_error: int
    member_responses: tuple[LeaveMemberResponse, ...] = ()


JoinCallback = Callable[[JoinGroupResult], None]
SyncCallback = Callable[[SyncGroupResult], None]


@dataclass(frozen=True, slots=True)
class MemberSummary:
    """A member as DescribeGroups shows it."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """A group as DescribeGroups shows it (Kafka's `GroupSummary`)."""

    state: str
    protocol_type: str
    protocol: str
    members: tuple[MemberSummary, ...]


EMPTY_GROUP = GroupSummary(NO_STATE, NO_PROTOCOL_TYPE, NO_PROTOCOL, ())
"""What DescribeGroups answers with an error."""
DEAD_GROUP = GroupSummary(str(GroupState.DEAD), NO_PROTOCOL_TYPE, NO_PROTOCOL, ())
"""What DescribeGroups answers for a group this coordinator does not have."""
OFFSETS_ONLY_GROUP = GroupSummary(str(GroupState.EMPTY), NO_PROTOCOL_TYPE, NO_PROTOCOL, ())
"""A group of standalone commits (offsets, no membership), as Kafka describes it."""


@dataclass(frozen=True, slots=True)
class GroupOverview:
    """A group as ListGroups shows it."""

    group_id: str
    protocol_type: str
    state: str


@dataclass(eq=False, slots=True)
class MemberMetadata:
    """Kafka's `MemberMetadata`: one member's identity, timeouts, protocols and the answers it awaits.

    `heartbeat_satisfied` tracks the heartbeat expected before the member's session times out; a member
    awaiting a JoinGroup or SyncGroup answer needs none, unless it is new (it may be expired while it
    waits for its first join)."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    supported_protocols: Protocols
    assignment: bytes = b""
    awaiting_join_callback: JoinCallback | None = None
    awaiting_sync_callback: SyncCallback | None = None
    is_leaving: bool = False
    is_new: bool = False
    heartbeat_satisfied: bool = False

    @property
    def is_static_member(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join_callback is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync_callback is not None

    def protocol_names(self) -> set[str]:
        return {name for name, _ in self.supported_protocols}

    def metadata(self, protocol: str) -> bytes:
        """The member's metadata for `protocol`; ValueError if it does not support it (Kafka's
        IllegalArgumentException)."""
        for name, metadata in self.supported_protocols:
            if name == protocol:
                return metadata
        raise ValueError("Member does not support protocol")

    @property
    def has_satisfied_heartbeat(self) -> bool:
        if self.is_new:
            return self.heartbeat_satisfied
        if self.is_awaiting_join or self.is_awaiting_sync:
            return True
        return self.heartbeat_satisfied

    def matches(self, protocols: Sequence[tuple[str, bytes]]) -> bool:
        """Whether `protocols` are the member's, in the same order with the same metadata."""
        return list(protocols) == list(self.supported_protocols)

    def summary(self, protocol: str) -> MemberSummary:
        return MemberSummary(
            self.member_id,
            self.group_instance_id,
            self.client_id,
            self.client_host,
            self.metadata(protocol),
            self.assignment,
        )

    def summary_no_metadata(self) -> MemberSummary:
        return MemberSummary(self.member_id, self.group_instance_id, self.client_id, self.client_host, b"", b"")

    def vote(self, candidates: set[str]) -> str:
        """The member's most preferred protocol among `candidates` (Kafka's `vote`)."""
        for name, _ in self.supported_protocols:
            if name in candidates:
                return name
        raise ValueError("Member does not support any of the candidate protocols")

    def __repr__(self) -> str:
        return (
            f"MemberMetadata(memberId={self.member_id}, groupInstanceId={self.group_instance_id}, "
            f"clientId={self.client_id}, clientHost={self.client_host}, "
            f"sessionTimeoutMs={self.session_timeout_ms}, rebalanceTimeoutMs={self.rebalance_timeout_ms}, "
            f"supportedProtocols={[name for name, _ in self.supported_protocols]})"
        )


def subscribed_topics(metadata: bytes) -> set[str]:
    """The topics of a consumer protocol subscription, read with its version 0 layout, which prefixes every
    later version (`ConsumerProtocol.deserializeSubscription(buffer, 0)`): int16 version, then an array
    (int32 count) of int16-length strings. ValueError when the bytes are not one."""
    try:
        (count,) = struct.unpack_from(">i", metadata, 2)
        offset, topics = 6, set()
        for _ in range(max(count, 0)):
            (length,) = struct.unpack_from(">h", metadata, offset)
            offset += 2
            if length < 0 or offset + length > len(metadata):
                raise ValueError("truncated topic name")
            topics.add(metadata[offset : offset + length].decode())
            offset += length
    except (struct.error, UnicodeDecodeError) as error:
        raise ValueError(f"not a consumer protocol subscription: {error}") from error
    return topics


class GroupMetadata:
    """Kafka's `GroupMetadata` without the offsets: members (insertion-ordered), static members
    (group.instance.id -> member id), pending members (ids handed out with MEMBER_ID_REQUIRED, not joined
    yet), the protocol votes and the generation. `now_ms` stamps each state change."""

    def __init__(self, group_id: str, initial_state: GroupState, now_ms: Callable[[], int]) -> None:
        self.group_id = group_id
        self._state = initial_state
        self._now_ms = now_ms
        self.current_state_timestamp: int | None = now_ms()
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: dict[str, MemberMetadata] = {}
        self.static_members: dict[str, str] = {}
        self.pending_members: set[str] = set()
        self.num_members_awaiting_join = 0
        self._supported_protocols: Counter[str] = Counter()
        self.subscribed_topics: set[str] | None = None
        self.new_member_added = False

    # --- state ----------------------------------------------------------------------------------------

    @property
    def state(self) -> GroupState:
        return self._state

    def is_(self, state: GroupState) -> bool:
        return self._state is state

    def can_rebalance(self) -> bool:
        return self._state in VALID_PREVIOUS_STATES[GroupState.PREPARING_REBALANCE]

    def transition_to(self, target: GroupState) -> None:
        """Move to `target`, stamping the time; IllegalStateError if Kafka's table forbids it."""
        valid = VALID_PREVIOUS_STATES[target]
        if self._state not in valid:
            names = ",".join(sorted(state.value for state in valid))
            raise IllegalStateError(
                f"Group {self.group_id} should be in the {names} states before moving to {target} state. "
                f"Instead it is in {self._state} state"
            )
        self._state = target
        self.current_state_timestamp = self._now_ms()

    # --- members --------------------------------------------------------------------------------------

    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def get(self, member_id: str) -> MemberMetadata:
        return self.members[member_id]

    @property
    def size(self) -> int:
        return len(self.members)

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def add(self, member: MemberMetadata, callback: JoinCallback | None = None) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.protocol_type != member.protocol_type or not self.supports_protocols(
            member.protocol_type, member.protocol_names()
        ):
            raise IllegalStateError(f"member {member.member_id} does not support the group's protocols")
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._supported_protocols.update(member.protocol_names())
        member.awaiting_join_callback = callback
        if member.is_awaiting_join:
            self.num_members_awaiting_join += 1

    def remove(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self._supported_protocols.subtract(member.protocol_names())
            if member.is_awaiting_join:
                self.num_members_awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else make any rejoined member the leader. False when the group
        has no leader or no member rejoined."""
        if self.leader_id is None:
            return False
        if self.get(self.leader_id).is_awaiting_join:
            return True
        for member_id, member in self.members.items():
            if member.is_awaiting_join:
                self.leader_id = member_id
                return True
        return False

    def replace_group_instance(self, old_member_id: str, new_member_id: str, group_instance_id: str) -> MemberMetadata:
        """A static member rejoined with a new member id: the old id is fenced (its pending JoinGroup and
        SyncGroup answered FENCED_INSTANCE_ID) and the member keeps everything else under the new id."""
        old = self.members.pop(old_member_id, None)
        if old is None:
            raise ValueError(f"Cannot replace non-existing member id {old_member_id}")
        self.maybe_invoke_join_callback(old, JoinGroupResult(old_member_id, errors.FencedInstanceIdError.code))
        self.maybe_invoke_sync_callback(old, SyncGroupResult(errors.FencedInstanceIdError.code))
        old.member_id = new_member_id
        self.members[new_member_id] = old
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members[group_instance_id] = new_member_id
        return old

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_members and not self.has(member_id)

    def has_static_member(self, group_instance_id: str | None) -> bool:
        return group_instance_id is not None and group_instance_id in self.static_members

    def is_static_member_fenced(self, member_id: str, group_instance_id: str | None) -> bool:
        """A known group.instance.id presented with another member id than the group's."""
        return group_instance_id is not None and self.static_members.get(group_instance_id, member_id) != member_id

    def not_yet_rejoined_members(self) -> list[MemberMetadata]:
        return [member for member in self.members.values() if not member.is_awaiting_join]

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_members_awaiting_join and not self.pending_members

    def rebalance_timeout_ms(self) -> int:
        return max((member.rebalance_timeout_ms for member in self.members.values()), default=0)

    @staticmethod
    def generate_member_id(client_id: str, group_instance_id: str | None) -> str:
        """`clientId-UUID`, or `groupInstanceId-UUID` for a static member."""
        prefix = group_instance_id if group_instance_id is not None else client_id
        return f"{prefix}-{uuid.uuid4()}"

    def update_member(self, member: MemberMetadata, protocols: Protocols, callback: JoinCallback | None) -> None:
        self._supported_protocols.subtract(member.protocol_names())
        self._supported_protocols.update(name for name, _ in protocols)
        member.supported_protocols = list(protocols)
        if callback is not None and not member.is_awaiting_join:
            self.num_members_awaiting_join += 1
        elif callback is None and member.is_awaiting_join:
            self.num_members_awaiting_join -= 1
        member.awaiting_join_callback = callback

    def maybe_invoke_join_callback(self, member: MemberMetadata, result: JoinGroupResult) -> None:
        callback = member.awaiting_join_callback
        if callback is not None:
            member.awaiting_join_callback = None
            self.num_members_awaiting_join -= 1
            callback(result)

    def maybe_invoke_sync_callback(self, member: MemberMetadata, result: SyncGroupResult) -> bool:
        """Answer the member's pending SyncGroup; whether it had one."""
        callback = member.awaiting_sync_callback
        if callback is None:
            return False
        member.awaiting_sync_callback = None
        callback(result)
        return True

    # --- protocols and generations --------------------------------------------------------------------

    def candidate_protocols(self) -> set[str]:
        """The protocols every member supports."""
        count = len(self.members)
        return {name for name, supporters in self._supported_protocols.items() if supporters == count}

    def select_protocol(self) -> str:
        """Kafka's `selectProtocol`: every member votes for its most preferred protocol among those all
        support; the most votes win (a tie goes to the protocol first voted for)."""
        if not self.members:
            raise IllegalStateError("Cannot select protocol for empty group")
        candidates = self.candidate_protocols()
        votes = Counter(member.vote(candidates) for member in self.members.values())
        return votes.most_common(1)[0][0]

    def supports_protocols(self, member_protocol_type: str, member_protocols: set[str]) -> bool:
        if self.is_(GroupState.EMPTY):
            return bool(member_protocol_type) and bool(member_protocols)
        count = len(self.members)
        return self.protocol_type == member_protocol_type and any(
            self._supported_protocols[name] == count for name in member_protocols
        )

    def compute_subscribed_topics(self) -> set[str] | None:
        """The topics a consumer group subscribes to (None when unknown: not a consumer group, or a
        subscription that does not parse)."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol_name is None:
            return None
        try:
            return set().union(*(subscribed_topics(m.metadata(self.protocol_name)) for m in self.members.values()))
        except ValueError:
            return None

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """Whether the group consumes `topic`; True when it cannot tell, to be safe (OffsetDelete)."""
        return self.subscribed_topics is None or topic in self.subscribed_topics

    def init_next_generation(self) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(GroupState.COMPLETING_REBALANCE)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(GroupState.EMPTY)

    def current_member_metadata(self) -> tuple[JoinGroupResponseMember, ...]:
        """The members with their metadata for the chosen protocol: the leader's JoinGroup answer."""
        if self._state in (GroupState.DEAD, GroupState.PREPARING_REBALANCE) or self.protocol_name is None:
            raise IllegalStateError(f"Cannot obtain member metadata for group in state {self._state}")
        protocol = self.protocol_name
        return tuple(
            JoinGroupResponseMember(m.member_id, m.group_instance_id, m.metadata(protocol))
            for m in self.members.values()
        )

    def summary(self) -> GroupSummary:
        if self.is_(GroupState.STABLE):
            protocol = self.protocol_name
            if protocol is None:
                raise IllegalStateError("Invalid null group protocol for stable group")
            members = tuple(m.summary(protocol) for m in self.members.values())
            return GroupSummary(str(self._state), self.protocol_type or "", protocol, members)
        members = tuple(m.summary_no_metadata() for m in self.members.values())
        return GroupSummary(str(self._state), self.protocol_type or "", NO_PROTOCOL, members)

    def overview(self) -> GroupOverview:
        return GroupOverview(self.group_id, self.protocol_type or "", str(self._state))

    def __repr__(self) -> str:
        return (
            f"GroupMetadata(groupId={self.group_id}, generation={self.generation_id}, "
            f"protocolType={self.protocol_type}, currentState={self._state}, members={list(self.members.values())})"
        )

    # --- the record in __consumer_offsets (GroupMetadataValue as a plain dict) ------------------------

    def to_value_dict(self, assignment: Mapping[str, bytes]) -> dict[str, Any]:
        """The group as GroupMetadataValue's fields, with each member's `assignment` (Kafka's
        `groupMetadataValue`): the chosen protocol's metadata as the member's subscription."""
        protocol = self.protocol_name
        return {
            "protocol_type": self.protocol_type or "",
            "generation": self.generation_id,
            "protocol": protocol,
            "leader": self.leader_id,
            "current_state_timestamp": self.current_state_timestamp if self.current_state_timestamp is not None else -1,
            "members": [
                {
                    "member_id": m.member_id,
                    "group_instance_id": m.group_instance_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "rebalance_timeout": m.rebalance_timeout_ms,
                    "session_timeout": m.session_timeout_ms,
                    "subscription": m.metadata(protocol) if protocol is not None else b"",
                    "assignment": assignment.get(m.member_id, b""),
                }
                for m in self.members.values()
            ],
        }

    @classmethod
    def load(cls, group_id: str, value: Mapping[str, Any], now_ms: Callable[[], int]) -> GroupMetadata:
        """The group a GroupMetadataValue describes (Kafka's `GroupMetadata.loadGroup`): Stable with its
        members, or Empty without."""
        members = value.get("members") or []
        group = cls(group_id, GroupState.STABLE if members else GroupState.EMPTY, now_ms)
        group.generation_id = value["generation"]
        group.protocol_type = value.get("protocol_type") or None
        group.protocol_name = value.get("protocol")
        group.leader_id = value.get("leader")
        timestamp = value.get("current_state_timestamp")
        group.current_state_timestamp = timestamp if timestamp is not None and timestamp >= 0 else None
        protocol = group.protocol_name or ""
        for record in members:
            member = MemberMetadata(
                member_id=record["member_id"],
                group_instance_id=record.get("group_instance_id"),
                client_id=record["client_id"],
                client_host=record["client_host"],
                rebalance_timeout_ms=record["rebalance_timeout"],
                session_timeout_ms=record["session_timeout"],
                protocol_type=group.protocol_type or "",
                supported_protocols=[(protocol, bytes(record["subscription"]))],
                assignment=bytes(record["assignment"]),
            )
            group.members[member.member_id] = member
            group._supported_protocols.update(member.protocol_names())
            if member.group_instance_id is not None:
                group.static_members[member.group_instance_id] = member.member_id
        if group.leader_id is None and group.members:
            group.leader_id = next(iter(group.members))
        group.subscribed_topics = group.compute_subscribed_topics()
        return group
