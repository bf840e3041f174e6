package trigger

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The catalog holds exactly the triggers of docs/messaging.md's table, with their recipients.
func TestCatalogIsTheDocsTable(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/messaging.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## Triggers")
	section, _, _ = strings.Cut(section, "\n## ")
	section, _, _ = strings.Cut(section, "\n### ") // the first table only
	row := regexp.MustCompile("(?m)^\\| (`[^|]+`) \\| ([^|]+) \\|")
	name := regexp.MustCompile("`([a-z_.]+)`")
	var want []string
	to := map[string]Recipient{}
	for _, r := range row.FindAllStringSubmatch(section, -1) {
		for _, n := range name.FindAllStringSubmatch(r[1], -1) {
			want = append(want, n[1])
			to[n[1]] = Guest
			if strings.Contains(r[2], "notification addresses") {
				to[n[1]] = Owner
			}
		}
	}
	var got []string
	for _, d := range Catalog() {
		got = append(got, d.Name)
		if d.To != to[d.Name] {
			t.Errorf("%s goes to %s, the doc says %s", d.Name, d.To, to[d.Name])
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("catalog %v\ndoc     %v", got, want)
	}
}

func TestScheduledTriggersAndTheirDefaults(t *testing.T) {
	want := map[string]string{ // days, time
		PaymentDueSoon: "3 10:00", StayArrival: "3 10:00", StayCheckout: "1 18:00", StayThanks: "1 10:00",
	}
	for _, e := range (Settings{}).All() {
		w, scheduled := want[e.Name]
		if e.Scheduled() != scheduled {
			t.Errorf("%s scheduled = %v", e.Name, e.Scheduled())
		}
		if !e.Enabled {
			t.Errorf("%s is off by default", e.Name)
		}
		if scheduled {
			if got := strings.Join([]string{strconv.Itoa(e.Days), e.At.String()}, " "); got != w {
				t.Errorf("%s defaults %s, want %s", e.Name, got, w)
			}
		}
	}
	if _, ok := Lookup("stay.arrivals"); ok {
		t.Error("Lookup found an unknown trigger")
	}
}
