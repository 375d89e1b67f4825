"""The client's reason constants are generated from the proto enum mcpbridge.v1.Reason, not copied."""

from mcp_bridge import errors
from mcp_bridge._gen import reasons
from mcp_bridge._gen.mcpbridge.v1 import reason_pb2
from mcp_bridge._retry import RETRY_REASONS


def test_every_enum_value_is_a_constant_equal_to_its_name() -> None:
    names = {v.name for v in reason_pb2.Reason.DESCRIPTOR.values if v.number != 0}
    assert reasons.ALL == names
    for name in names:
        assert getattr(reasons, name) == name


def test_public_constants_come_from_the_enum() -> None:
    assert errors.CALL_OUTCOME_UNKNOWN == reason_pb2.Reason.Name(reason_pb2.CALL_OUTCOME_UNKNOWN)
    assert errors.SESSION_LOST_REASONS == {"REPLICA_UNAVAILABLE", "SESSION_CLOSED", "SESSION_NOT_FOUND"}
    assert errors.SESSION_LOST_REASONS <= reasons.ALL
    assert RETRY_REASONS - {""} <= reasons.ALL
