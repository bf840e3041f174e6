// Package browser is the Chromium harness of vros's browser tests (systest/paneltest,
// systest/enginetest): one headless Debian Chromium per call, driven through chromedp, on a
// closed network where no name resolves but loopback's. It guards what a page must never
// do: a request leaving loopback (but to the addresses a test allows) or an uncaught script
// exception fails the test, each reported when the test ends.
package browser

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Chromium is Debian's Chromium (make chromium installs it).
const Chromium = "/usr/bin/chromium"

// Start opens a headless Chromium of its own for the test (a separate browser process:
// two calls are two browsers) and returns the context of its tab, ended with the test.
// Without Chromium the test is skipped, or fails when VROS_REQUIRE_CHROMIUM=1. allow names
// addresses (prefixes) beyond loopback that the test serves itself (Stripe.js).
func Start(t *testing.T, allow ...string) context.Context {
	t.Helper()
	if _, err := os.Stat(Chromium); err != nil {
		if os.Getenv("VROS_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("%s: %v (make chromium installs it)", Chromium, err)
		}
		t.Skipf("%s: %v (make chromium installs it; VROS_REQUIRE_CHROMIUM=1 makes this a failure)", Chromium, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(Chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1200, 900))
	t.Cleanup(cancelAlloc)
	var mu sync.Mutex
	var problems []string
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if u := ev.Request.URL; !allowed(u, allow) {
				problems = append(problems, "request beyond loopback: "+u)
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				msg += " " + d.Exception.Description
			}
			problems = append(problems, "script exception: "+msg)
		}
	}))
	// Started on this context: a step's shorter-lived child context must not own the tab.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", Chromium, err)
	}
	t.Cleanup(func() {
		cancelBrowser()
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			t.Error(p)
		}
	})
	return bctx
}

// allowed says whether the page may request u: loopback, a data: URL, or an address
// starting with one of allow.
func allowed(u string, allow []string) bool {
	return strings.HasPrefix(u, "http://127.0.0.1:") || strings.HasPrefix(u, "data:") ||
		slices.ContainsFunc(allow, func(a string) bool { return strings.HasPrefix(u, a) })
}
