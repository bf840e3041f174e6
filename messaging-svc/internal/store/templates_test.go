package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/messaging-svc/internal/template"
)

var templatesRuns atomic.Int64

// templatesAccount is an account of the test's own, so that tests also pass run again on the
// same database (-count).
func templatesAccount(name string) string {
	return fmt.Sprintf("%s-t%d-%d", name, time.Now().UnixNano(), templatesRuns.Add(1))
}

func openTemplates(t *testing.T) *Templates {
	t.Helper()
	s, err := NewTemplates(context.Background(), testDB)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func templatesArrival(lang string, brand, property int64) template.Template {
	return template.Template{Trigger: "stay.arrival", Language: lang, BrandID: brand, PropertyID: property,
		Subject: "See you soon, {{.Guest.FirstName}}", HTML: "<p>Hello {{.Guest.FirstName}}</p>"}
}

func TestTemplatesCRUD(t *testing.T) {
	ctx := context.Background()
	s := openTemplates(t)
	acc := templatesAccount("crud")
	now := time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)

	a, err := s.Create(ctx, acc, templatesArrival("en", 0, 0), now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Create(ctx, acc, templatesArrival("it", 0, 0), now)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != 1 || b.ID != 2 || a.Account != acc || !a.Created.Equal(now) || a.Trigger != "stay.arrival" {
		t.Fatalf("created %+v and %+v, want ids 1 and 2 of %s at %v", a, b, acc, now)
	}
	got, err := s.Get(ctx, acc, b.ID)
	if err != nil || got != b {
		t.Fatalf("Get = %+v, %v; want %+v", got, err, b)
	}

	// Update: the wording and the scope change, the id and creation stay.
	later := now.Add(time.Hour)
	w := templatesArrival("it", 3, 0)
	w.Text = "Ciao"
	up, err := s.Update(ctx, acc, b.ID, w, later)
	if err != nil {
		t.Fatal(err)
	}
	if up.ID != b.ID || up.BrandID != 3 || up.Text != "Ciao" || !up.Created.Equal(now) || !up.Updated.Equal(later) {
		t.Fatalf("updated %+v", up)
	}

	// List: by id, filtered.
	all, err := s.List(ctx, acc, TemplateFilter{})
	if err != nil || len(all) != 2 || all[0].ID != 1 || all[1].ID != 2 {
		t.Fatalf("List = %+v, %v", all, err)
	}
	if it, err := s.List(ctx, acc, TemplateFilter{Language: "it", BrandID: 3}); err != nil || len(it) != 1 || it[0].ID != 2 {
		t.Fatalf("List(it, brand 3) = %+v, %v", it, err)
	}
	if none, err := s.List(ctx, acc, TemplateFilter{Trigger: "stay.thanks"}); err != nil || len(none) != 0 {
		t.Fatalf("List(stay.thanks) = %+v, %v", none, err)
	}

	// Delete, then every action on the id answers not found; the id is never given again.
	if err := s.Delete(ctx, acc, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, acc, a.ID); !errors.Is(err, ErrTemplateNotFound) {
		t.Fatalf("Get of a deleted template: %v", err)
	}
	if _, err := s.Update(ctx, acc, a.ID, templatesArrival("en", 0, 0), later); !errors.Is(err, ErrTemplateNotFound) {
		t.Fatalf("Update of a deleted template: %v", err)
	}
	if err := s.Delete(ctx, acc, a.ID); !errors.Is(err, ErrTemplateNotFound) {
		t.Fatalf("Delete twice: %v", err)
	}
	c, err := s.Create(ctx, acc, templatesArrival("en", 0, 0), later)
	if err != nil || c.ID != 3 {
		t.Fatalf("a template created after a delete: %+v, %v; want id 3", c, err)
	}
}

func TestTemplatesConflict(t *testing.T) {
	ctx := context.Background()
	s := openTemplates(t)
	acc := templatesAccount("conflict")
	now := time.Now()
	first, err := s.Create(ctx, acc, templatesArrival("en", 2, 5), now)
	if err != nil {
		t.Fatal(err)
	}
	var ce *TemplateConflictError
	if _, err := s.Create(ctx, acc, templatesArrival("en", 2, 5), now); !errors.As(err, &ce) || ce.Existing != first.ID {
		t.Fatalf("a second template of the same key: %v, want a conflict naming %d", err, first.ID)
	}
	// Another brand, property, language or trigger is another key.
	for _, k := range []template.Template{templatesArrival("en", 0, 5), templatesArrival("en", 2, 0), templatesArrival("de", 2, 5),
		{Trigger: "stay.thanks", Language: "en", BrandID: 2, PropertyID: 5, Subject: "s", HTML: "h"}} {
		if _, err := s.Create(ctx, acc, k, now); err != nil {
			t.Fatalf("%+v: %v", k, err)
		}
	}
	// An update onto another template's key conflicts and changes nothing.
	other, err := s.Create(ctx, acc, templatesArrival("nl", 0, 0), now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, acc, other.ID, templatesArrival("en", 2, 5), now); !errors.As(err, &ce) || ce.Existing != first.ID {
		t.Fatalf("an update onto another's key: %v", err)
	}
	if got, err := s.Get(ctx, acc, other.ID); err != nil || got.Language != "nl" {
		t.Fatalf("after a refused update: %+v, %v", got, err)
	}
	// Another account has its own keys.
	if _, err := s.Create(ctx, templatesAccount("conflict-other"), templatesArrival("en", 2, 5), now); err != nil {
		t.Fatalf("another account's template of the same key: %v", err)
	}
}

func TestTemplatesForTrigger(t *testing.T) {
	ctx := context.Background()
	s := openTemplates(t)
	acc := templatesAccount("choose")
	now := time.Now()
	for _, tpl := range []template.Template{templatesArrival("en", 0, 0), templatesArrival("it", 0, 0), templatesArrival("it", 0, 7), templatesArrival("de", 0, 0),
		{Trigger: "stay.thanks", Language: "it", Subject: "s", HTML: "h"}} {
		if _, err := s.Create(ctx, acc, tpl, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create(ctx, templatesAccount("choose-other"), templatesArrival("it", 0, 9), now); err != nil {
		t.Fatal(err)
	}
	got, err := s.ForTrigger(ctx, acc, "stay.arrival", "it")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, x := range got {
		keys = append(keys, fmt.Sprintf("%s/%s/%d", x.Trigger, x.Language, x.PropertyID))
	}
	if fmt.Sprint(keys) != "[stay.arrival/en/0 stay.arrival/it/0 stay.arrival/it/7]" {
		t.Fatalf("ForTrigger(stay.arrival, it) = %v: want the account's it and en templates of the trigger", keys)
	}
	if c, ok := template.Choose(got, "stay.arrival", "it", 0, 7); !ok || c.PropertyID != 7 || c.Language != "it" {
		t.Fatalf("Choose picked %+v", c)
	}
	// Spanish: the account has none, so its English one comes with the answer.
	es, err := s.ForTrigger(ctx, acc, "stay.arrival", "es")
	if err != nil || len(es) != 1 || es[0].Language != "en" {
		t.Fatalf("ForTrigger(es) = %+v, %v", es, err)
	}
	if en, err := s.ForTrigger(ctx, acc, "stay.arrival", "en"); err != nil || len(en) != 1 {
		t.Fatalf("ForTrigger(en) = %+v, %v", en, err)
	}
}

// TestTemplatesIsolation: accounts creating at once each get their own ids from 1 and see only
// their own templates; an id of another account is not found.
func TestTemplatesIsolation(t *testing.T) {
	ctx := context.Background()
	s := openTemplates(t)
	const accounts, each = 8, 6
	langs := template.Languages()
	names := make([]string, accounts)
	var wg sync.WaitGroup
	errs := make(chan error, accounts*each)
	for i := range accounts {
		names[i] = templatesAccount(fmt.Sprintf("iso%d", i))
		for j := range each {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Create(ctx, names[i], templatesArrival(langs[j%len(langs)], int64(j/len(langs)), 0), time.Now()); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, acc := range names {
		all, err := s.List(ctx, acc, TemplateFilter{})
		if err != nil || len(all) != each {
			t.Fatalf("%s: %d templates, %v", acc, len(all), err)
		}
		for k, x := range all {
			if x.ID != int64(k+1) || x.Account != acc {
				t.Fatalf("%s: template %d is %+v", acc, k, x)
			}
		}
		other := names[(i+1)%accounts]
		if _, err := s.Get(ctx, other, int64(each+1)); !errors.Is(err, ErrTemplateNotFound) {
			t.Fatalf("id %d of no account: %v", each+1, err)
		}
	}
	// Erase takes one account's templates and no other's.
	if err := s.Erase(ctx, names[0]); err != nil {
		t.Fatal(err)
	}
	if all, _ := s.List(ctx, names[0], TemplateFilter{}); len(all) != 0 {
		t.Fatalf("erased account still has %d templates", len(all))
	}
	if all, _ := s.List(ctx, names[1], TemplateFilter{}); len(all) != each {
		t.Fatalf("another account has %d templates after an erasure, want %d", len(all), each)
	}
}
