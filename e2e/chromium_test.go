package e2e

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// chromiumPath is the browser the tests drive: $CHROMIUM, or Debian's chromium on PATH.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("MCPBRIDGE_REQUIRE_PEERS") == "1" {
		t.Fatal("chromium is not installed (scripts/install-chromium.sh installs it)")
	}
	// Outside make test (a developer's go test without the browser): skipped, not failed. make test sets
	// MCPBRIDGE_REQUIRE_PEERS and installs chromium first, so there a missing browser fails above.
	t.Skip("chromium is not installed (scripts/install-chromium.sh installs it)")
	return ""
}

// startChromium starts a headless Chromium (the tests' flags, then more) and returns the context of its
// first tab, which starts the browser on first use, and stop, which closes the tab and the browser.
func startChromium(t *testing.T, more ...chromedp.ExecAllocatorOption) (ctx context.Context, stop func()) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // containers and CI run as root, where Chromium's sandbox cannot start
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, more...)...)
	ctx, cancelTab := chromedp.NewContext(actx)
	return ctx, func() { cancelTab(); cancelAlloc() }
}
