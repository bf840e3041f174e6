package panel

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
)

func styleHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// TestPreviewCSP: a preview's styles (elements and attributes, decoded as the browser hashes
// them) are allowed by their hashes alone; a preview without any keeps the panel's policy.
func TestPreviewCSP(t *testing.T) {
	if got := previewCSP("<p>plain</p>"); got != pageCSP {
		t.Errorf("no style: %s", got)
	}
	got := previewCSP("<style>p{color:red}</style><p style=\"color:&quot;x&quot;\">a</p><p style=\"color:&quot;x&quot;\">b</p>")
	want := "style-src 'self' 'unsafe-hashes' " + styleHash("p{color:red}") + " " + styleHash(`color:"x"`) + "; img-src"
	if !strings.Contains(got, want) {
		t.Errorf("policy %s, want %s", got, want)
	}
	for _, keep := range []string{"default-src 'none'", "script-src 'self';", "img-src 'self' data:;", "frame-ancestors 'none'"} {
		if !strings.Contains(got, keep) {
			t.Errorf("policy %s lacks %s", got, keep)
		}
	}
	if got := previewCSP("<style>a{}</style>"); strings.Contains(got, "unsafe-hashes") {
		t.Errorf("unsafe-hashes without a style attribute: %s", got)
	}
	var many strings.Builder
	for i := range 300 {
		many.WriteString("<p style=\"margin:" + strings.Repeat("1", i+1) + "px\">x</p>")
	}
	if n := strings.Count(previewCSP(many.String()), "'sha256-"); n != maxPreviewStyles {
		t.Errorf("%d hashes, want %d", n, maxPreviewStyles)
	}
}
