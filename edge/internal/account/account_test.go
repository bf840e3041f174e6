package account

import (
	"strings"
	"testing"
)

func TestIssue(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds {
		s, c := Issue(k, "1001")
		if len(s.Secret) < 32 {
			t.Errorf("%s: secret %q is shorter than 32 characters", k, s.Secret)
		}
		if seen[s.Secret] {
			t.Errorf("%s: secret repeated", k)
		}
		seen[s.Secret] = true
		if strings.Contains(c.SecretHash, s.Secret) || c.SecretHash == s.Secret {
			t.Errorf("%s: stored form contains the secret", k)
		}
		if !c.Matches(s.Secret) {
			t.Errorf("%s: credential does not match its own secret", k)
		}
		if c.Matches(s.Secret+"x") || c.Matches("") {
			t.Errorf("%s: credential matches a wrong secret", k)
		}
		if c.AccountID != "1001" {
			t.Errorf("%s: account = %q", k, c.AccountID)
		}
	}
	if _, c := Issue(OwnerToken, "1"); c.Identifier != c.SecretHash {
		t.Errorf("owner token is not looked up by its hash")
	}
}
