package fieldstest

import "testing"

func TestApply(t *testing.T) {
	got := string(Apply(t, `{"a":{"b":[{"c":1},{"c":2}]}}`,
		Set("a.b[1].c", 3), Set("a.b[2].c", 4), Set("a.b[0]", Del), Set("x.y", "z")))
	want := `{"a":{"b":[{"c":3},{"c":4}]},"x":{"y":"z"}}` + "\n"
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
