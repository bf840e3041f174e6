package store

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestSuppressions(t *testing.T) {
	ctx := context.Background()
	s, err := NewSuppressions(ctx, testDB)
	if err != nil {
		t.Fatal(err)
	}
	acc, other := testAccount(t), testAccount(t)+"-other"
	first := Suppression{Account: acc, Address: "Guest@Example.com ", Reason: "550 no such user",
		MessageID: acc + ":booking.confirmed:1:once", Created: messagesT0}
	// added twice at once, and again later: one entry, the first
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Add(ctx, first); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := s.Add(ctx, Suppression{Account: acc, Address: "guest@example.com", Reason: "later",
		Created: messagesT0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, Suppression{Account: acc, Address: "owner@example.com", Reason: "552",
		Created: messagesT0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, Suppression{Account: other, Address: "x@example.com", Created: messagesT0}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, Suppression{Account: acc}); err == nil {
		t.Fatal("added an empty address")
	}
	for _, c := range []struct {
		account, address string
		want             bool
	}{
		{acc, "guest@example.com", true}, {acc, "GUEST@example.COM", true}, {acc, "x@example.com", false},
		{other, "guest@example.com", false}, {other, "x@example.com", true},
	} {
		if got, err := s.Has(ctx, c.account, c.address); err != nil || got != c.want {
			t.Errorf("Has(%s, %s) = %v %v, want %v", c.account, c.address, got, err, c.want)
		}
	}
	list, err := s.List(ctx, acc)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if list[0].Address != "owner@example.com" || list[1].Address != "guest@example.com" ||
		list[1].Reason != "550 no such user" || list[1].MessageID != first.MessageID || !list[1].Created.Equal(messagesT0) {
		t.Fatalf("list: %+v", list)
	}
	if ok, err := s.Remove(ctx, other, "guest@example.com"); ok || err != nil {
		t.Fatalf("removed through another account: %v %v", ok, err)
	}
	if ok, err := s.Remove(ctx, acc, "Guest@example.com"); !ok || err != nil {
		t.Fatalf("remove: %v %v", ok, err)
	}
	if ok, _ := s.Remove(ctx, acc, "guest@example.com"); ok {
		t.Fatal("removed twice")
	}
	if has, _ := s.Has(ctx, acc, "guest@example.com"); has {
		t.Fatal("still suppressed after remove")
	}
	if err := s.Erase(ctx, acc); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(ctx, acc); len(list) != 0 {
		t.Fatalf("after erase: %+v", list)
	}
	if has, _ := s.Has(ctx, other, "x@example.com"); !has {
		t.Fatal("erase took another account's entry")
	}
}
