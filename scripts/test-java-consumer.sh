#!/usr/bin/env bash
# The Java library used as a user would: install it (mvn install, no tests), then build a project outside the
# checkout with the minimal pom.xml from clients/java/README.md ("From your own Maven project") and
# examples/QuickStart.java — so it needs only the installed artifact and Maven Central, not the checkout.
# scripts/test-java.sh runs it after the tests.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export MAVEN_OPTS="${MAVEN_OPTS:--Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}"

(cd "$root/clients/java" && mvn -B -q -ntp -Dstyle.color=never -DskipTests install 2>&1 | sed -u 's/\x1b\[0m//g')

# The core artifact keeps no agent-framework dependency: those live in clients/java/frameworks.
tree="$(cd "$root/clients/java" && mvn -B -q -ntp -Dstyle.color=never dependency:tree -DoutputFile=/dev/stdout 2>&1 | sed -u 's/\x1b\[0m//g')"
if grep -Eiq 'springframework|langchain4j|com\.openai' <<<"$tree"; then
  echo "test-java-consumer: the core client depends on an agent framework:" >&2
  grep -Ei 'springframework|langchain4j|com\.openai' <<<"$tree" >&2
  exit 1
fi
grep -q 'dev.mcpbridge:mcp-bridge-client' <<<"$tree" ||
  { echo "test-java-consumer: mvn dependency:tree printed no tree:" >&2; echo "$tree" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# The first ```xml block of the section is the sample pom.
awk '/^### From your own Maven project/{s=1} s&&/^```xml$/{x=1;next} x&&/^```$/{exit} x{print}' \
  "$root/clients/java/README.md" >"$tmp/pom.xml"
grep -q '<artifactId>mcp-bridge-client</artifactId>' "$tmp/pom.xml" ||
  { echo "test-java-consumer: no sample pom.xml found in clients/java/README.md" >&2; exit 1; }
mkdir -p "$tmp/src/main/java"
cp "$root/clients/java/examples/QuickStart.java" "$tmp/src/main/java/"
(cd "$tmp" && mvn -B -q -ntp -Dstyle.color=never compile 2>&1 | sed -u 's/\x1b\[0m//g')
[[ -f "$tmp/target/classes/QuickStart.class" ]] || { echo "test-java-consumer: QuickStart did not compile" >&2; exit 1; }
echo "test-java-consumer: a project outside the checkout builds against the installed library"
