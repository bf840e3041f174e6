package property

import (
	"context"
	"errors"
	"time"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/property-svc/internal/photo"
)

// Errors of the domain. The store maps the driver's answers (no document, duplicate key)
// into them; the HTTP adapter maps them to interface A and B answers.
var (
	ErrNotFound      = errors.New("property not found")
	ErrCodeTaken     = errors.New("internal_code already used")
	ErrPhotoNotFound = errors.New("photo not found")
)

// Repository is what the domain needs from storage; property-svc's Mongo store satisfies
// it, converting to and from its own documents. Every call takes the account: a property
// of another account is as missing as one that never existed (ErrNotFound). Properties
// are named by the account and their property id; every change is one atomic write that
// also records the property's change event.
type Repository interface {
	// Create stores a new property and returns its property id; ErrCodeTaken when a live
	// property of the account already has its internal code; a *LimitError when max > 0
	// and the account already has max live properties; ErrAccountErased when the account
	// was erased.
	Create(ctx context.Context, account string, p Property, max int) (int64, error)
	// UpdateContent replaces the A1 fields p carries of the live property with p's internal
	// code, and returns its property id.
	UpdateContent(ctx context.Context, account string, p Property) (int64, error)
	// Delete marks the property with internal code code deleted and frees the code.
	Delete(ctx context.Context, account, code string) error

	// Find reads a live property.
	Find(ctx context.Context, account string, ref PropertyRef) (Stored, error)
	// Locate returns the property id of a live property, reading no more than it must.
	Locate(ctx context.Context, account string, ref PropertyRef) (int64, error)
	// Read returns the live property with internal code code as its events carry it.
	Read(ctx context.Context, account, code string) (contract.Property, error)
	// List returns the page q asks for of the account's live properties, sorted by internal
	// code, and how many properties q selects in all.
	List(ctx context.Context, account string, q ListQuery) (ListPage, error)

	// SetPolicy, SetRates, SetMethods, SetTaxes and SetServices replace one section of the
	// property's configuration; SetAmenities replaces the amenity list and the display
	// options sent; SetDailyPrices sets the given dates and keeps the others.
	SetPolicy(ctx context.Context, account string, pid int64, p Policy) error
	SetRates(ctx context.Context, account string, pid int64, r Rates) error
	SetMethods(ctx context.Context, account string, pid int64, m Methods) error
	SetTaxes(ctx context.Context, account string, pid int64, t Taxes) error
	SetServices(ctx context.Context, account string, pid int64, s Services) error
	SetAmenities(ctx context.Context, account string, pid int64, a Amenities) error
	SetDailyPrices(ctx context.Context, account string, pid int64, days []DayPrice) error
	// Gateways returns the payment methods of a live property, secrets opened.
	Gateways(ctx context.Context, account string, ref PropertyRef) ([]Gateway, error)

	// The photos of a property are in an order, the first the main photo (published as each
	// photo's position, 1 to n; contract.ComparePhotos). Each photo write below is one write
	// of the property, made only if the property has not changed since the photos it was
	// computed from were read (else computed again on the new ones), so that of concurrent
	// photo writes none is lost.

	// AddPhoto stores the renditions of a new photo of p, last in the order, and returns its
	// photo id.
	AddPhoto(ctx context.Context, p Stored, img *photo.Result, source string) (int64, error)
	// ReplacePhoto gives photo id of p new renditions, keeping its place in the order;
	// ErrPhotoNotFound when p has none.
	ReplacePhoto(ctx context.Context, p Stored, id int64, img *photo.Result, source string) error
	// DeletePhoto removes photo id of p and its renditions; the others keep their order.
	// ErrPhotoNotFound when p has none.
	DeletePhoto(ctx context.Context, p Stored, id int64) error
	// OrderPhotos orders the photos of p: order is given the photo ids in their current order
	// and returns them in the new one, which is written and returned. An error of order is
	// returned as it is, nothing written; when the property changed between the read and the
	// write, order is called again on its photos then.
	OrderPhotos(ctx context.Context, p Stored, order func(cur []int64) ([]int64, error)) ([]int64, error)
	// Rendition returns one rendition of the photo whose media key is key;
	// ErrPhotoNotFound when there is none.
	Rendition(ctx context.Context, key, name string) ([]byte, error)

	// ChangeSettings changes the account's settings: change is given the settings in force
	// and returns what to change (the fields it carries), all of it written at once, with
	// the version bumped and the settings event recorded, unless the settings changed
	// meanwhile: then change is called again on the new ones, so that no change is lost.
	// An error of change is returned as it is, nothing written; ErrUnchanged writes
	// nothing and returns the settings in force.
	ChangeSettings(ctx context.Context, account string, change func(cur Settings) (AccountSettings, error)) (Settings, error)
	// NextGroupID allocates the id of a new category or tag.
	NextGroupID(ctx context.Context, kind GroupKind) (int64, error)
	// ICalLink reads the iCal export link of a live property (no token, not revoked: never
	// made).
	ICalLink(ctx context.Context, account, code string) (ICalLink, error)
	// SetICalToken sets the property's export token (empty: revoked), bumping its version and
	// recording its event. With onlyIfNone the token is set only if the property never had
	// one, and the link in force is returned either way, so that concurrent first gets agree.
	SetICalToken(ctx context.Context, account, code, token string, onlyIfNone bool) (ICalLink, error)
	// ReadSettings returns the account's settings in force.
	ReadSettings(ctx context.Context, account string) (Settings, error)

	// Revenue reads the rate plans, restrictions, per-date prices and channel markups of a
	// live property.
	Revenue(ctx context.Context, account string, ref PropertyRef) (Revenue, error)
	// ChangeRevenue changes them: change is given them as stored now, changes cur in place
	// and returns the event type of the change (contract.RatePlansUpdated …). All of it is
	// written at once, with the version bumped and the event recorded, unless the property
	// changed meanwhile: then change is called again on its new state, so that of
	// concurrent changes none is lost. An error of change is returned as it is, nothing
	// written. It returns the state written.
	ChangeRevenue(ctx context.Context, account string, ref PropertyRef, change func(cur *Revenue) (string, error)) (Revenue, error)

	// LocateAll returns the property ids of the live properties of account among codes,
	// by internal code; codes with no live property are missing from the map.
	LocateAll(ctx context.Context, account string, codes []string) (map[string]int64, error)

	Accounts
}

// ErrUnchanged is what a settings change returns to write nothing.
var ErrUnchanged = errors.New("settings unchanged")

// Stored is what the domain reads of a live property before it changes it.
type Stored struct {
	Account      string
	ID           int64 // property_id
	InternalCode string
	MaxGuest     int
	// Photos are the media keys of the property's photos, by photo id.
	Photos map[int64]string
}

// Gateway is a stored payment method, its secrets opened: what getpayment gives a
// website so that it can take a payment.
type Gateway struct {
	Provider    Provider
	Description string
	// Public holds values safe to show (public_key, open_key, email, gateway_id,
	// merchant_id, secure_3d); Secrets the others (secret_key, login_id,
	// transaction_key, encryption_key, password).
	Public, Secrets map[string]string
}

// Settings are an account's settings in force, defaults filled in for what it has not set
// (docs/interface-a.md, account settings).
type Settings struct {
	Account       string
	Version       int64
	UpdatedAt     time.Time
	Currency      string
	Timezone      string
	Languages     []string
	LeadSources   []LeadSource
	Brands        []Brand
	Search        SearchSettings
	WeekendNights int // 2 (Friday and Saturday nights) or 3 (and Sunday)
	// DefaultLeadSource is the default in force (DefaultLeadSourceOf); DefaultLeadSourceSet
	// tells whether the account chose it (then a change of lead sources must keep it).
	DefaultLeadSource    int
	DefaultLeadSourceSet bool
	ExchangeRates        []ExchangeRate // sorted by currency
	Categories           []Group
	Tags                 []Group
	Promotions           []Promotion
	// ChannelMarkups are the account's channel markups, sorted by channel.
	ChannelMarkups []Markup
	// LastBrandID is the largest brand id the account has had: a new brand's id is above
	// it, so that a deleted brand's id (which bookings may carry) is never given again.
	LastBrandID int
}

// SearchSettings are the website search settings in force.
type SearchSettings struct {
	DefaultLimit      int
	PriceFilterEnable bool
	RateType          RateType
}
