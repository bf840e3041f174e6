package seal

import (
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	b, err := New(NewKey())
	if err != nil {
		t.Fatal(err)
	}
	s := b.Seal("sk_live_secret", "1001:stripe.secret_key")
	if strings.Contains(s, "sk_live_secret") {
		t.Fatal("sealed value contains the plain text")
	}
	if s == b.Seal("sk_live_secret", "1001:stripe.secret_key") {
		t.Fatal("two seals of one value are equal: nonce reused")
	}
	if got, err := b.Open(s, "1001:stripe.secret_key"); err != nil || got != "sk_live_secret" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := b.Open(s, "1002:stripe.secret_key"); err == nil {
		t.Fatal("opened under another account's context")
	}
	other, _ := New(NewKey())
	if _, err := other.Open(s, "1001:stripe.secret_key"); err == nil {
		t.Fatal("opened with another key")
	}
	for _, bad := range []string{"", "short", "AAAA"} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%q) accepted a bad key", bad)
		}
	}
}
