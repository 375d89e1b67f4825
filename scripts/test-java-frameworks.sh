#!/usr/bin/env bash
# Tests of the Java agent-framework adapters (clients/java/frameworks: Spring AI, LangChain4j) against the real
# bin/mcp-bridge, the demo server and a scripted OpenAI-compatible model server the tests run on loopback. Installs
# the core client (dev.mcpbridge:mcp-bridge-client, no tests, no javadoc) into ~/.m2 first, since the adapters are
# separate Maven projects that depend on it; the framework jars come from Maven Central (cached in ~/.m2).
#
# Environment: MCPBRIDGE_BIN (default bin/mcp-bridge), MAVEN_ARGS for extra Maven flags (e.g. `-pl spring-ai -am
# -Dtest=SpringAiAgentTest`), JAVA_TEST_TIMEOUT (seconds, default 900).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v mvn >/dev/null || { echo "test-java-frameworks: mvn not found; install Maven 3.8+ and a JDK 17+" >&2; exit 1; }
export MCPBRIDGE_BIN="${MCPBRIDGE_BIN:-$root/bin/mcp-bridge}"
if [[ ! -x "$MCPBRIDGE_BIN" ]]; then
  echo "test-java-frameworks: $MCPBRIDGE_BIN is missing; run \`make build\`" >&2
  exit 1
fi
export MAVEN_OPTS="${MAVEN_OPTS:--Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}"
strip() { sed -u 's/\x1b\[0m//g'; }  # Maven 3.8 -q -B still prints ESC[0m

(cd "$root/clients/java" && mvn -B -q -ntp -Dstyle.color=never -DskipTests -Dmaven.javadoc.skip=true \
  -Dmaven.source.skip=true install 2>&1 | strip)

cd "$root/clients/java/frameworks"
rm -rf ./*/target/surefire-reports
status=0
# shellcheck disable=SC2086
timeout --kill-after=15 "${JAVA_TEST_TIMEOUT:-900}" \
  mvn -B -q -ntp -Dstyle.color=never -Dmcpbridge.bin="$MCPBRIDGE_BIN" -Dsurefire.printSummary=true \
    -Dsurefire.failIfNoSpecifiedTests=false ${MAVEN_ARGS:-} verify 2>&1 | strip || status=$?

if compgen -G "*/target/surefire-reports/TEST-*.xml" >/dev/null; then
  awk -F'"' '/<testsuite /{for(i=1;i<NF;i++){if($i~/ tests=$/)t+=$(i+1);if($i~/ failures=$/)f+=$(i+1);if($i~/ errors=$/)e+=$(i+1);if($i~/ skipped=$/)s+=$(i+1)}} END{printf "test-java-frameworks: %d tests, %d failures, %d errors, %d skipped\n",t,f,e,s}' \
    ./*/target/surefire-reports/TEST-*.xml
fi
exit $status
