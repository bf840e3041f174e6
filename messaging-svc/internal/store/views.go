package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/mongostore"
)

// Collections of the views (intake keeps them from vros.property.v1).
const (
	collPropertyViews = "property_views"
	collAccountViews  = "account_views"
)

// The check-in and check-out times of every stay: vros has no per-property times yet, and
// booking-svc records these on every booking (booking.CheckinTime, booking.CheckoutTime).
const (
	viewsCheckinTime  = "15:00"
	viewsCheckoutTime = "10:00"
)

// PropertyView is what templates and scheduling need of a property (from vros.property.v1).
type PropertyView struct {
	Account                                string
	ID                                     int64
	Name, Address, City, Postcode, Country string
	// CheckinTime and CheckoutTime are "15:00" and "10:00" for every property (the times
	// booking-svc gives every booking); Timezone is the property's own IANA zone, "" when it
	// has none (the account's applies).
	CheckinTime, CheckoutTime, Timezone string
	Version                             int64
}

// AccountView is the account's settings snapshot (from vros.property.v1).
type AccountView struct {
	// Name is the account's name; "" today: the settings event carries none.
	Account, Name, Timezone string
	Languages               []string // the account's languages, first = default
	Brands                  []BrandView
	Version                 int64
}

// BrandView is one brand of an account: Website is https:// and its first domain ("" none),
// Language its default language ("" the account's).
type BrandView struct {
	ID                      int64
	Name, Website, Language string
}

// propertyViewDoc is a property_views document, _id "<account>:<property>".
type propertyViewDoc struct {
	ID           string `bson:"_id"`
	Account      string `bson:"account"`
	PropertyID   int64  `bson:"property_id"`
	Name         string `bson:"name"`
	Address      string `bson:"address"`
	City         string `bson:"city"`
	Postcode     string `bson:"postcode"`
	Country      string `bson:"country"`
	CheckinTime  string `bson:"checkin_time"`
	CheckoutTime string `bson:"checkout_time"`
	Timezone     string `bson:"timezone"`
	// Deleted keeps a deleted property's version, so that an older event redelivered
	// after the delete does not bring it back.
	Deleted bool  `bson:"deleted"`
	Version int64 `bson:"version"`
}

// accountViewDoc is an account_views document, _id the account. An erased account has none:
// its mark is in erased_accounts (Erased), as every vros store keeps it.
type accountViewDoc struct {
	ID        string         `bson:"_id"`
	Account   string         `bson:"account"`
	Name      string         `bson:"name"`
	Timezone  string         `bson:"timezone"`
	Languages []string       `bson:"languages"`
	Brands    []brandViewDoc `bson:"brands"`
	Version   int64          `bson:"version"`
}

type brandViewDoc struct {
	ID       int64  `bson:"id"`
	Name     string `bson:"name"`
	Website  string `bson:"website"`
	Language string `bson:"language"`
}

// Views is intake's copy of what messaging needs of vros.property.v1: each property's name,
// address and zone, each account's zone, languages and brands, and which accounts are
// erased. Every write keeps the newest version only (conditional under the document's
// lease, so two replicas or a replay never move a view back).
type Views struct {
	props, accounts *mongo.Collection
	// marks are the erased accounts: _id the account and the erasure's instant, nothing of
	// the account besides (docs/erasure.md: what survives by design).
	marks *mongo.Collection
}

const collErasedAccounts = "erased_accounts"

// NewViews returns the views in db, creating their collections.
func NewViews(ctx context.Context, db *mongo.Database) (*Views, error) {
	err := mongostore.Ensure(ctx, db, append(mongostore.WithLocks(collPropertyViews, collAccountViews), collErasedAccounts),
		[]mongostore.Index{{Collection: collPropertyViews, Keys: bson.D{{Key: "account", Value: 1}}}})
	if err != nil {
		return nil, err
	}
	return &Views{props: db.Collection(collPropertyViews), accounts: db.Collection(collAccountViews),
		marks: db.Collection(collErasedAccounts)}, nil
}

func viewsPropertyID(account string, id int64) string {
	return account + ":" + strconv.FormatInt(id, 10)
}

// Property answers a live property of the account (false: unknown or deleted).
func (v *Views) Property(ctx context.Context, account string, id int64) (PropertyView, bool, error) {
	var d propertyViewDoc
	// The _id holds the account: a look-up by it is the account's alone.
	err := v.props.FindOne(ctx, bson.D{{Key: "_id", Value: viewsPropertyID(account, id)}}).Decode(&d)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return PropertyView{}, false, nil
	case err != nil:
		return PropertyView{}, false, fmt.Errorf("property view: %w", err)
	case d.Deleted || d.Account != account:
		return PropertyView{}, false, nil
	}
	return PropertyView{Account: d.Account, ID: d.PropertyID, Name: d.Name, Address: d.Address, City: d.City,
		Postcode: d.Postcode, Country: d.Country, CheckinTime: d.CheckinTime, CheckoutTime: d.CheckoutTime,
		Timezone: d.Timezone, Version: d.Version}, true, nil
}

// Account answers the account's view (false: no settings event seen yet, or erased).
func (v *Views) Account(ctx context.Context, account string) (AccountView, bool, error) {
	d, ok, err := v.account(ctx, account)
	if err != nil || !ok {
		return AccountView{}, false, err
	}
	out := AccountView{Account: d.Account, Name: d.Name, Timezone: d.Timezone, Languages: d.Languages, Version: d.Version}
	for _, b := range d.Brands {
		out.Brands = append(out.Brands, BrandView(b))
	}
	return out, true, nil
}

func (v *Views) account(ctx context.Context, account string) (accountViewDoc, bool, error) {
	var d accountViewDoc
	err := v.accounts.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Decode(&d)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return d, false, nil
	case err != nil:
		return d, false, fmt.Errorf("account view: %w", err)
	}
	return d, true, nil
}

// Erased reports whether the account was erased (contract.AccountErased): its events are
// then ignored.
func (v *Views) Erased(ctx context.Context, account string) (bool, error) {
	err := v.marks.FindOne(ctx, bson.D{{Key: "_id", Value: account}}).Err()
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("erased accounts: %w", err)
	}
	return true, nil
}

// PropertyOf is the view of a property snapshot.
func PropertyOf(p contract.Property) PropertyView {
	c := p.Content
	return PropertyView{Account: p.AccountID, ID: p.PropertyID, Name: c.Name, Address: c.Address, City: c.City,
		Postcode: c.Postcode, Country: c.Country, CheckinTime: viewsCheckinTime, CheckoutTime: viewsCheckoutTime,
		Timezone: c.Timezone, Version: p.Version}
}

// AccountOf is the view of a settings snapshot (its defaults filled in).
func AccountOf(s contract.Settings) AccountView {
	s = s.WithDefaults()
	out := AccountView{Account: s.AccountID, Timezone: s.Timezone, Languages: append([]string(nil), s.Languages...), Version: s.Version}
	for _, b := range s.Brands {
		bv := BrandView{ID: int64(b.ID), Name: b.Name, Language: b.DefaultLanguage}
		if hosts := b.HostNames(); len(hosts) > 0 {
			bv.Website = "https://" + hosts[0]
		}
		out.Brands = append(out.Brands, bv)
	}
	return out
}

// SaveProperty stores the view of a property at its version unless the view holds that
// version or a newer one, or the account is erased; deleted stores the property as deleted
// (Property then answers false). It reports whether it wrote.
func (v *Views) SaveProperty(ctx context.Context, p PropertyView, deleted bool) (bool, error) {
	if p.Account == "" || p.ID == 0 {
		return false, errors.New("property view without identity")
	}
	if gone, err := v.Erased(ctx, p.Account); err != nil || gone {
		return false, err
	}
	d := propertyViewDoc{ID: viewsPropertyID(p.Account, p.ID), Account: p.Account, PropertyID: p.ID, Version: p.Version, Deleted: deleted}
	if !deleted {
		d.Name, d.Address, d.City, d.Postcode, d.Country = p.Name, p.Address, p.City, p.Postcode, p.Country
		d.CheckinTime, d.CheckoutTime, d.Timezone = p.CheckinTime, p.CheckoutTime, p.Timezone
	}
	wrote, err := viewsKeepNewer(ctx, v.props, d.ID, p.Version, d)
	if err != nil || !wrote {
		return wrote, err
	}
	// Written after an erasure that was marked meanwhile: gone again (EraseAccount marks,
	// then deletes; a writer writes, then looks for the mark).
	return true, v.eraseIfErased(ctx, p.Account)
}

// SaveAccount stores the account's view at its version unless the view holds that version
// or a newer one, or the account is erased. It reports whether it wrote.
func (v *Views) SaveAccount(ctx context.Context, a AccountView) (bool, error) {
	if a.Account == "" {
		return false, errors.New("account view without account")
	}
	d := accountViewDoc{ID: a.Account, Account: a.Account, Name: a.Name, Timezone: a.Timezone, Languages: a.Languages, Version: a.Version}
	for _, b := range a.Brands {
		d.Brands = append(d.Brands, brandViewDoc(b))
	}
	if gone, err := v.Erased(ctx, a.Account); err != nil || gone {
		return false, err
	}
	wrote, err := viewsKeepNewer(ctx, v.accounts, a.Account, a.Version, d)
	if err != nil || !wrote {
		return wrote, err
	}
	// Written after an erasure that was marked meanwhile: gone again, as SaveProperty's.
	return true, v.eraseIfErased(ctx, a.Account)
}

// ForgetProperty deletes a property's view (a tombstone of its key).
func (v *Views) ForgetProperty(ctx context.Context, account string, id int64) error {
	_, err := v.props.DeleteOne(ctx, bson.D{{Key: "_id", Value: viewsPropertyID(account, id)}, {Key: "account", Value: account}})
	if err != nil {
		return fmt.Errorf("forget property view: %w", err)
	}
	return nil
}

// ForgetAccount deletes the account's view (a tombstone of its settings key); an erasure
// mark, kept apart, stays.
func (v *Views) ForgetAccount(ctx context.Context, account string) error {
	return mongostore.WithLease(ctx, v.accounts, account, func() error {
		_, err := v.accounts.DeleteOne(ctx, bson.D{{Key: "_id", Value: account}})
		if err != nil {
			return fmt.Errorf("forget account view: %w", err)
		}
		return nil
	})
}

// EraseAccount marks the account erased, then deletes its views: a write that lands after
// the mark finds it and deletes what it wrote (SaveProperty), or is refused by it
// (SaveAccount). Erasing twice is harmless.
func (v *Views) EraseAccount(ctx context.Context, account string, at time.Time) error {
	if account == "" {
		return errors.New("erase without account")
	}
	_, err := v.marks.ReplaceOne(ctx, bson.D{{Key: "_id", Value: account}},
		bson.D{{Key: "_id", Value: account}, {Key: "erased_at", Value: at.UTC()}}, viewsUpsert())
	if err != nil {
		return fmt.Errorf("mark account erased: %w", err)
	}
	return v.eraseViews(ctx, account)
}

func (v *Views) eraseViews(ctx context.Context, account string) error {
	if _, err := v.props.DeleteMany(ctx, bson.D{{Key: "account", Value: account}}); err != nil {
		return fmt.Errorf("erase property views: %w", err)
	}
	err := mongostore.WithLease(ctx, v.accounts, account, func() error {
		_, err := v.accounts.DeleteOne(ctx, bson.D{{Key: "_id", Value: account}})
		return err
	})
	if err != nil {
		return fmt.Errorf("erase account view: %w", err)
	}
	return nil
}

func (v *Views) eraseIfErased(ctx context.Context, account string) error {
	gone, err := v.Erased(ctx, account)
	if err != nil || !gone {
		return err
	}
	return v.eraseViews(ctx, account)
}

// viewsStored is what a conditional write reads of the stored document.
type viewsStored struct {
	Version int64 `bson:"version"`
}

func viewsRead(ctx context.Context, coll *mongo.Collection, id string) (viewsStored, bool, error) {
	var cur viewsStored
	err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&cur)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return cur, false, nil
	case err != nil:
		return cur, false, fmt.Errorf("read %s %s: %w", coll.Name(), id, err)
	}
	return cur, true, nil
}

// viewsKeepNewer writes doc as document id of coll at version unless coll holds that version
// or a newer one, or an erasure mark, and reports whether it wrote: the conditional update
// of the views and the booking snapshots (the rule of mongostore.KeepNewer, for documents
// of our own shape). A document not stored yet is inserted, which is atomic by _id: of two
// writers one fails and compares again. A stored one is replaced only by a writer holding
// its lease (mongostore.WithLease) that read it again: the compare and the write are then one
// step for every writer of the document, in this process or in another replica. (FerretDB
// applies even a filtered update as a read and a write, hence the lease rather than a
// version in the filter.) Writers without the lease only insert, so under it the document
// can appear or vanish (a forget, an erasure), never change: the writer reads again and
// tries the write that fits, a few times. Declare coll with mongostore.WithLocks.
func viewsKeepNewer(ctx context.Context, coll *mongo.Collection, id string, version int64, doc any) (bool, error) {
	cur, ok, err := viewsRead(ctx, coll, id)
	if err != nil || ok && cur.Version >= version {
		return false, err
	}
	if !ok {
		_, err := coll.InsertOne(ctx, doc)
		switch {
		case err == nil:
			return true, nil
		case !mongostore.IsDuplicate(err):
			return false, fmt.Errorf("write %s %s v%d: %w", coll.Name(), id, version, err)
		}
	}
	wrote := false
	err = mongostore.WithLease(ctx, coll, id, func() error {
		for range 5 {
			cur, ok, err := viewsRead(ctx, coll, id)
			if err != nil || ok && cur.Version >= version {
				return err
			}
			if ok {
				res, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, doc)
				if err != nil {
					return fmt.Errorf("write %s %s v%d: %w", coll.Name(), id, version, err)
				}
				if wrote = res.MatchedCount == 1; wrote {
					return nil
				}
				continue // removed meanwhile: inserted again
			}
			_, err = coll.InsertOne(ctx, doc)
			if wrote = err == nil; wrote {
				return nil
			}
			if !mongostore.IsDuplicate(err) {
				return fmt.Errorf("write %s %s v%d: %w", coll.Name(), id, version, err)
			}
		}
		return fmt.Errorf("write %s %s v%d: it kept appearing and vanishing", coll.Name(), id, version)
	})
	return wrote, err
}

func viewsUpsert() options.Lister[options.ReplaceOptions] { return options.Replace().SetUpsert(true) }
