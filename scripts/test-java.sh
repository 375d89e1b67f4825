#!/usr/bin/env bash
# Java client tests: builds clients/java (stubs generated from proto/ by protoc from Maven Central) and runs its
# JUnit 5 tests against the real bin/mcp-bridge (`make test-java` builds it first) and real MCP servers (the
# built-in demo server; @modelcontextprotocol/server-everything from .tools/node after `make node-tools`).
#
# Environment: MCPBRIDGE_BIN (default bin/mcp-bridge), MCPBRIDGE_REQUIRE_PEERS=1 to fail instead of skip when a
# peer is missing, MAVEN_ARGS for extra Maven flags (e.g. -Dtest=OperationsTest), JAVA_TEST_TIMEOUT (seconds,
# default 600; the first run downloads Maven dependencies into ~/.m2), MCPBRIDGE_OAUTHPEER for a prebuilt
# internal/testauth/cmd/oauthpeer (the OAuth integration test builds it with `go build` otherwise; without go it
# skips, or fails when peers are required). After a full run it also builds a project outside the checkout
# against the installed library (scripts/test-java-consumer.sh) and runs the agent-framework adapters' tests
# (scripts/test-java-frameworks.sh).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root/clients/java"

command -v mvn >/dev/null || { echo "test-java: mvn not found; install Maven 3.8+ and a JDK 17+" >&2; exit 1; }
command -v java >/dev/null || { echo "test-java: java not found; install a JDK 17+" >&2; exit 1; }

export MCPBRIDGE_BIN="${MCPBRIDGE_BIN:-$root/bin/mcp-bridge}"
export MCPBRIDGE_NODE_MODULES="${MCPBRIDGE_NODE_MODULES:-$root/.tools/node/node_modules}"
if [[ ! -x "$MCPBRIDGE_BIN" ]]; then
  echo "test-java: $MCPBRIDGE_BIN is missing; run \`make build\` (or \`make test-java\`)" >&2
  exit 1
fi

# One Maven JVM with a modest heap; the forked test JVM's flags are in pom.xml (surefire argLine). The machines
# are shared, so no parallel builds.
export MAVEN_OPTS="${MAVEN_OPTS:--Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}"

rm -rf target/surefire-reports
status=0
# shellcheck disable=SC2086
timeout --kill-after=15 "${JAVA_TEST_TIMEOUT:-600}" \
  mvn -B -q -ntp -Dstyle.color=never \
    -Dmcpbridge.bin="$MCPBRIDGE_BIN" \
    -Dmcpbridge.nodeModules="$MCPBRIDGE_NODE_MODULES" \
    -Dmcpbridge.requirePeers="${MCPBRIDGE_REQUIRE_PEERS:-0}" \
    -Dsurefire.printSummary=true \
    ${MAVEN_ARGS:-} verify 2>&1 | sed -u 's/\x1b\[0m//g' || status=$?  # Maven 3.8 -q -B still prints ESC[0m

# A one-line tally from the surefire reports, so CI logs show what ran.
if compgen -G "target/surefire-reports/TEST-*.xml" >/dev/null; then
  awk -F'"' '/<testsuite /{for(i=1;i<NF;i++){if($i~/ tests=$/)t+=$(i+1);if($i~/ failures=$/)f+=$(i+1);if($i~/ errors=$/)e+=$(i+1);if($i~/ skipped=$/)s+=$(i+1)}} END{printf "test-java: %d tests, %d failures, %d errors, %d skipped\n",t,f,e,s}' \
    target/surefire-reports/TEST-*.xml
fi
if ((status == 0)) && [[ "${MAVEN_ARGS:-}" != *-Dtest=* ]]; then
  "$root/scripts/test-java-consumer.sh" || status=$?
  ((status != 0)) || MAVEN_ARGS= "$root/scripts/test-java-frameworks.sh" || status=$?
fi
exit $status
