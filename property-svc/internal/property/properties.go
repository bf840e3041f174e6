package property

import (
	"context"
	"fmt"
	"time"

	"github.com/vros/vros/property-svc/internal/photo"
)

// Properties applies the decoded requests of interface A (and of the interface B actions
// property-svc owns) to the properties of an account, through a Repository. Decoding and
// validation of each body are the Decode* functions of this package; what needs the
// stored property (a season's minimum stay against maxguest, a photo that must exist)
// is checked here.
type Properties struct {
	repo Repository
	// photos decodes and renders photos within the memory its fetcher's Config allows
	// (docs/photos.md, "Memory"): a large photo takes a second of CPU and up to that
	// memory while it is processed.
	photos *photo.Photos
	// now says what today is: restrictions older than RestrictionHistory days are pruned
	// (SetClock).
	now func() time.Time
}

// NewProperties returns the domain service over repo; fetcher reads photo links, and its
// Config bounds the memory photos take.
func NewProperties(repo Repository, fetcher *photo.Fetcher) *Properties {
	return &Properties{repo: repo, photos: photo.NewPhotos(fetcher), now: time.Now}
}

// Create stores a new property (A1 create) and returns its property id. max, when above
// 0, is the most live properties the account's plan allows (a *LimitError beyond it).
func (s *Properties) Create(ctx context.Context, account string, p Property, max int) (int64, error) {
	pid, err := s.repo.Create(ctx, account, p, max)
	if err != nil {
		return 0, fmt.Errorf("create property %q: %w", p.InternalCode, err)
	}
	return pid, nil
}

// Update changes the content of a property (A1 update) and returns its property id.
func (s *Properties) Update(ctx context.Context, account string, p Property) (int64, error) {
	pid, err := s.repo.UpdateContent(ctx, account, p)
	if err != nil {
		return 0, fmt.Errorf("update property %q: %w", p.InternalCode, err)
	}
	return pid, nil
}

// Delete deletes a property (A1 delete) and removes it from the account's categories and
// tags (readers also skip ids of properties they do not have: a delete that stops between
// the two leaves an id that names nothing).
func (s *Properties) Delete(ctx context.Context, account, code string) error {
	pid, err := s.repo.Locate(ctx, account, PropertyRef{InternalCode: code})
	if err == nil {
		err = s.repo.Delete(ctx, account, code)
	}
	if err == nil {
		err = s.forgetProperty(ctx, account, pid)
	}
	if err != nil {
		return fmt.Errorf("delete property %q: %w", code, err)
	}
	return nil
}

// Photo applies an A2 request and returns the photo id (0 on delete). The image is
// decoded and rendered before anything is stored, so a bad image changes nothing; its
// faults are *photo.Error.
func (s *Properties) Photo(ctx context.Context, account string, req PhotoRequest) (int64, error) {
	ph := req.Photo
	p, err := s.repo.Find(ctx, account, PropertyRef{InternalCode: ph.InternalCode})
	if err != nil {
		return 0, fmt.Errorf("photo of property %q: %w", ph.InternalCode, err)
	}
	id := int64(ph.ID)
	if req.Action == Delete {
		if err := s.repo.DeletePhoto(ctx, p, id); err != nil {
			return 0, fmt.Errorf("delete photo %d: %w", id, err)
		}
		return 0, nil
	}
	if _, ok := p.Photos[id]; req.Action == Update && !ok {
		return 0, fmt.Errorf("replace photo %d: %w", id, ErrPhotoNotFound)
	}
	img, err := s.render(ctx, ph.Image)
	if err != nil {
		return 0, err
	}
	source := ""
	if ph.IsLink {
		source = ph.Image
	}
	if req.Action == Create {
		if id, err = s.repo.AddPhoto(ctx, p, img, source); err != nil {
			return 0, fmt.Errorf("add photo: %w", err)
		}
		return id, nil
	}
	if err := s.repo.ReplacePhoto(ctx, p, id, img, source); err != nil {
		return 0, fmt.Errorf("replace photo %d: %w", id, err)
	}
	return id, nil
}

// OrderPhotos applies an A2 order request: the photos of the property with internal code
// code are numbered in the order of order (photo ids, the main photo first), which must list
// every photo the property has when the order is written, each once (checkPhotoOrder: a
// *fields.Error on photo.order otherwise, nothing changed). It returns the order stored.
func (s *Properties) OrderPhotos(ctx context.Context, account, code string, order []int64) ([]int64, error) {
	p, err := s.repo.Find(ctx, account, PropertyRef{InternalCode: code})
	if err != nil {
		return nil, fmt.Errorf("order photos of property %q: %w", code, err)
	}
	stored, err := s.repo.OrderPhotos(ctx, p, func(cur []int64) ([]int64, error) {
		return order, checkPhotoOrder("photo.order", order, cur)
	})
	if err != nil {
		return nil, fmt.Errorf("order photos of property %q: %w", code, err)
	}
	return stored, nil
}

func (s *Properties) render(ctx context.Context, image string) (*photo.Result, error) {
	res, err := s.photos.Process(ctx, image)
	if err != nil {
		return nil, fmt.Errorf("photo: %w", err)
	}
	return res, nil
}

// Rendition returns one rendition (photo.Names) of the photo whose media key is key.
func (s *Properties) Rendition(ctx context.Context, key, name string) ([]byte, error) {
	data, err := s.repo.Rendition(ctx, key, name)
	if err != nil {
		return nil, fmt.Errorf("rendition %s/%s: %w", key, name, err)
	}
	return data, nil
}

// SetPolicy replaces the payment policy (A3).
func (s *Properties) SetPolicy(ctx context.Context, account string, p Policy) error {
	return s.change(ctx, account, p.Property, "policy", func(pid int64) error {
		return s.repo.SetPolicy(ctx, account, pid, p)
	})
}

// SetRates replaces the rate settings (A4) of the property with internal code code.
// A season's minimum stay may not exceed the property's maxguest (the spec's rule), so
// the body is decoded by decode once the property is read, with its maxguest, or with 0
// (rule skipped) when there is no such property: an invalid body is refused as invalid
// before a missing property is reported.
func (s *Properties) SetRates(ctx context.Context, account, code string, decode func(maxGuest int) (Rates, error)) error {
	p, findErr := s.repo.Find(ctx, account, PropertyRef{InternalCode: code})
	r, err := decode(p.MaxGuest)
	if err != nil {
		return err
	}
	if findErr != nil {
		return fmt.Errorf("rates of property %q: %w", r.InternalCode, findErr)
	}
	if err := s.repo.SetRates(ctx, account, p.ID, r); err != nil {
		return fmt.Errorf("rates of property %q: %w", r.InternalCode, err)
	}
	return nil
}

// SetMethods replaces the payment methods (A5): the set sent is the whole set.
func (s *Properties) SetMethods(ctx context.Context, account string, m Methods) error {
	return s.change(ctx, account, PropertyRef{InternalCode: m.InternalCode}, "payment methods", func(pid int64) error {
		return s.repo.SetMethods(ctx, account, pid, m)
	})
}

// SetTaxes replaces the tax list.
func (s *Properties) SetTaxes(ctx context.Context, account string, t Taxes) error {
	return s.change(ctx, account, PropertyRef{InternalCode: t.InternalCode}, "taxes", func(pid int64) error {
		return s.repo.SetTaxes(ctx, account, pid, t)
	})
}

// SetServices replaces the default services.
func (s *Properties) SetServices(ctx context.Context, account string, sv Services) error {
	return s.change(ctx, account, PropertyRef{InternalCode: sv.InternalCode}, "services", func(pid int64) error {
		return s.repo.SetServices(ctx, account, pid, sv)
	})
}

// SetAmenities replaces the amenity list and changes the display options sent.
func (s *Properties) SetAmenities(ctx context.Context, account string, a Amenities) error {
	return s.change(ctx, account, PropertyRef{InternalCode: a.InternalCode}, "amenities", func(pid int64) error {
		return s.repo.SetAmenities(ctx, account, pid, a)
	})
}

// SetDailyPrices applies setprices_minnights: each date's recommended price and minimum
// stay; other dates keep theirs. A propertyId of another account is as unknown as a
// missing property.
func (s *Properties) SetDailyPrices(ctx context.Context, account string, req DailyPrices) error {
	ref := PropertyRef{ID: req.PropertyID}
	if req.AccountID != account {
		return fmt.Errorf("daily prices of property %d of another account: %w", req.PropertyID, ErrNotFound)
	}
	return s.change(ctx, account, ref, "daily prices", func(pid int64) error {
		return s.repo.SetDailyPrices(ctx, account, pid, req.Days)
	})
}

// Gateways returns the payment methods of property pid with their secrets (getpayment).
func (s *Properties) Gateways(ctx context.Context, account string, pid int) ([]Gateway, error) {
	gs, err := s.repo.Gateways(ctx, account, PropertyRef{ID: pid})
	if err != nil {
		return nil, fmt.Errorf("payment methods of property %d: %w", pid, err)
	}
	return gs, nil
}

// PutSettings changes the account settings a carries and returns those in force.
func (s *Properties) PutSettings(ctx context.Context, account string, a AccountSettings) (Settings, error) {
	st, err := s.repo.ChangeSettings(ctx, account, func(cur Settings) (AccountSettings, error) {
		a := a
		if a.Brands != nil {
			a.Brands = ptr(mergeSettingsBrands(cur.Brands, *a.Brands))
			a.LastBrandID = ptr(lastBrandID(cur, *a.Brands))
		}
		return a, a.check(cur)
	})
	if err != nil {
		return Settings{}, fmt.Errorf("account settings: %w", err)
	}
	return st, nil
}

// change runs write on the live property ref of account.
func (s *Properties) change(ctx context.Context, account string, ref PropertyRef, what string, write func(pid int64) error) error {
	pid, err := s.repo.Locate(ctx, account, ref)
	if err == nil {
		err = write(pid)
	}
	if err != nil {
		return fmt.Errorf("%s of property %s: %w", what, ref, err)
	}
	return nil
}

// String names the property as a message does: its internal code, else its id.
func (r PropertyRef) String() string {
	if r.InternalCode != "" {
		return fmt.Sprintf("%q", r.InternalCode)
	}
	return fmt.Sprintf("%d", r.ID)
}
