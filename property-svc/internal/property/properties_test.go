package property_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
)

// fakeRepo holds one property of account "1001". The methods the tests do not reach are
// the embedded nil interface's: calling one panics.
type fakeRepo struct {
	property.Repository
	stored property.Stored
	writes []string
}

func (f *fakeRepo) Find(_ context.Context, account string, ref property.PropertyRef) (property.Stored, error) {
	if account != f.stored.Account || (ref.InternalCode != f.stored.InternalCode && int64(ref.ID) != f.stored.ID) {
		return property.Stored{}, property.ErrNotFound
	}
	return f.stored, nil
}

func (f *fakeRepo) Locate(ctx context.Context, account string, ref property.PropertyRef) (int64, error) {
	p, err := f.Find(ctx, account, ref)
	return p.ID, err
}

func (f *fakeRepo) SetRates(context.Context, string, int64, property.Rates) error {
	f.writes = append(f.writes, "rates")
	return nil
}

func (f *fakeRepo) SetDailyPrices(context.Context, string, int64, []property.DayPrice) error {
	f.writes = append(f.writes, "prices")
	return nil
}

func newProperties() (*property.Properties, *fakeRepo) {
	repo := &fakeRepo{stored: property.Stored{Account: "1001", ID: 17, InternalCode: "VR-001", MaxGuest: 3,
		Photos: map[int64]string{5: "key5"}}}
	return property.NewProperties(repo, photo.NewFetcher(photo.Config{})), repo
}

func TestSetRatesDecodesAgainstTheStoredMaxGuest(t *testing.T) {
	props, repo := newProperties()
	ctx := context.Background()
	got := -1
	decode := func(maxGuest int) (property.Rates, error) {
		got = maxGuest
		return property.DecodeRates([]byte(ratesExample), maxGuest)
	}
	// The example's summer season asks 5 nights, above this property's maxguest 3.
	var fe *fields.Error
	if err := props.SetRates(ctx, "1001", "VR-001", decode); got != 3 || !errors.As(err, &fe) || len(repo.writes) != 0 {
		t.Fatalf("maxguest %d, err %v, writes %v; want 3, the season refused, nothing written", got, err, repo.writes)
	}
	// Missing property: the rule is skipped (0), so a valid body reports the property missing...
	if err := props.SetRates(ctx, "1001", "NOPE", decode); got != 0 || !errors.Is(err, property.ErrNotFound) {
		t.Fatalf("maxguest %d, err %v; want 0 and ErrNotFound", got, err)
	}
	// ...and an invalid one is refused as invalid first.
	invalid := func(int) (property.Rates, error) { return property.DecodeRates([]byte(`{}`), 0) }
	if err := props.SetRates(ctx, "1001", "NOPE", invalid); !errors.As(err, &fe) {
		t.Fatalf("invalid body for a missing property: %v; want the violations", err)
	}
	// Another account's property is as missing as one that never existed.
	if err := props.SetRates(ctx, "2002", "VR-001", decode); !errors.Is(err, property.ErrNotFound) {
		t.Fatalf("other account: %v", err)
	}
}

func TestSetDailyPricesOfAnotherAccountIsNotFound(t *testing.T) {
	props, repo := newProperties()
	err := props.SetDailyPrices(context.Background(), "1001", property.DailyPrices{AccountID: "2002", PropertyID: 17})
	if !errors.Is(err, property.ErrNotFound) || len(repo.writes) != 0 {
		t.Fatalf("err %v, writes %v", err, repo.writes)
	}
	if err := props.SetDailyPrices(context.Background(), "1001", property.DailyPrices{AccountID: "1001", PropertyID: 17}); err != nil ||
		len(repo.writes) != 1 {
		t.Fatalf("own property: err %v, writes %v", err, repo.writes)
	}
	err = props.SetDailyPrices(context.Background(), "1001", property.DailyPrices{AccountID: "1001", PropertyID: 18})
	if !errors.Is(err, property.ErrNotFound) || !strings.Contains(err.Error(), "property 18") {
		t.Fatalf("missing property: %v; want ErrNotFound naming it", err)
	}
}

func TestPhotoUpdateOfAMissingPhotoRendersNothing(t *testing.T) {
	props, _ := newProperties()
	// An image that cannot be decoded: reaching the renderer would answer a photo error.
	req := property.PhotoRequest{Action: property.Update, Photo: property.Photo{ID: 6, InternalCode: "VR-001", Image: "bm90IGFuIGltYWdl"}}
	if _, err := props.Photo(context.Background(), "1001", req); !errors.Is(err, property.ErrPhotoNotFound) {
		t.Fatalf("update of photo 6: %v; want ErrPhotoNotFound", err)
	}
	req.Photo.ID = 5
	if _, err := props.Photo(context.Background(), "1001", req); !errors.Is(err, photo.ErrNotImage) {
		t.Fatalf("update of photo 5 with a bad image: %v; want photo.ErrNotImage", err)
	}
}
