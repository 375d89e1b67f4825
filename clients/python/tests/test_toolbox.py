"""Toolbox naming (no bridge): names a model API accepts, distinct, stable across runs and orders."""

from __future__ import annotations

from mcp_bridge.toolbox import NAME_PATTERN, assign_names, fit_name


def test_fit_name() -> None:
    assert fit_name("get.weather/v2") == "get_weather_v2"
    long = "x" * 80
    a, b = fit_name(long, "s/" + long), fit_name(long, "t/" + long)
    assert len(a) == 64 and NAME_PATTERN.match(a) and a != b
    assert fit_name(long, "s/" + long) == a  # deterministic


def test_assign_names_prefix_and_collisions() -> None:
    pairs = [("github", "search"), ("jira", "search"), ("my.srv", "do it")]
    assert assign_names(pairs) == ["github_search", "jira_search", "my_srv_do_it"]
    none = assign_names(pairs, prefix="none")
    assert none[2] == "do_it" and none[0] != none[1] and all(NAME_PATTERN.match(n) for n in none)
    # the same pair gets the same name whatever the order
    assert assign_names(list(reversed(pairs)), prefix="none")[::-1] == none
    # a separator that would collide: "a_b"+"c" vs "a"+"b_c"
    names = assign_names([("a_b", "c"), ("a", "b_c")])
    assert len(set(names)) == 2 and all(NAME_PATTERN.match(n) for n in names)
    assert assign_names([("s", "t")], prefix=lambda s, t: f"{t}@{s}") == ["t_s"]


def test_calls_not_run_read_as_tool_errors() -> None:
    """What the adapters give a model for a call the bridge did not run; other errors stay errors."""
    import grpc

    from mcp_bridge._adapt import not_run_message
    from mcp_bridge.errors import ApprovalDeniedError, ApprovalExpiredError, UnavailableError

    denied = not_run_message(ApprovalDeniedError(grpc.StatusCode.PERMISSION_DENIED, "denied by bob: not today", reason="APPROVAL_DENIED"))
    assert denied is not None and "denied" in denied and "not today" in denied
    expired = not_run_message(ApprovalExpiredError(grpc.StatusCode.DEADLINE_EXCEEDED, "approval expired", reason="APPROVAL_EXPIRED"))
    assert expired is not None and "not run" in expired
    assert not_run_message(UnavailableError(grpc.StatusCode.UNAVAILABLE, "down")) is None
