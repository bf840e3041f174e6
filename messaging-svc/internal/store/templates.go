package store

// templates.go and settings.go: the accounts' templates and messaging settings, which the
// interface A resources (internal/api) write and the sender reads.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/messaging-svc/internal/template"
)

// Collections of the templates and the settings.
const (
	TemplatesColl = "templates"
	SettingsColl  = "settings"
)

// ErrTemplateNotFound: the account has no template of that id.
var ErrTemplateNotFound = errors.New("template does not exist")

// TemplateConflictError: the account has a template of the same trigger, language, brand and
// property already (the one a save would duplicate).
type TemplateConflictError struct {
	Existing int64 // its template id
	Key      template.Template
}

func (e *TemplateConflictError) Error() string {
	return fmt.Sprintf("template %d is the account's template of %s in %s for brand %d and property %d: update it",
		e.Existing, e.Key.Trigger, e.Key.Language, e.Key.BrandID, e.Key.PropertyID)
}

// Template is an account's template as stored: its id (per account, from 1, never reused),
// its wording and when it was created and last changed.
type Template struct {
	ID      int64
	Account string
	template.Template
	Created time.Time
	Updated time.Time
}

type templateDoc struct {
	ID         string    `bson:"_id"` // <account>:<template id>
	Account    string    `bson:"account"`
	TemplateID int64     `bson:"template_id"`
	Trigger    string    `bson:"trigger"`
	Language   string    `bson:"language"`
	BrandID    int64     `bson:"brand_id"`
	PropertyID int64     `bson:"property_id"`
	Subject    string    `bson:"subject"`
	HTML       string    `bson:"html"`
	Text       string    `bson:"text"`
	Created    time.Time `bson:"created"`
	Updated    time.Time `bson:"updated"`
}

func (d templateDoc) template() Template {
	return Template{ID: d.TemplateID, Account: d.Account, Created: d.Created.UTC(), Updated: d.Updated.UTC(),
		Template: template.Template{Trigger: d.Trigger, Language: d.Language, BrandID: d.BrandID, PropertyID: d.PropertyID,
			Subject: d.Subject, HTML: d.HTML, Text: d.Text}}
}

func templatesKey(account string, id int64) string { return fmt.Sprintf("%s:%d", account, id) }

// Templates is the `templates` collection: the accounts' templates, one per account,
// trigger, language, brand and property (a unique index).
type Templates struct {
	coll *mongo.Collection
	// seqs is the `settings` collection, whose account document holds the last template id
	// given (template_seq), so that an id is never given twice, even after a delete.
	seqs *mongo.Collection
}

// NewTemplates declares the templates' collection and indexes and returns the store.
func NewTemplates(ctx context.Context, db *mongo.Database) (*Templates, error) {
	err := mongostore.Ensure(ctx, db, []string{TemplatesColl, SettingsColl}, []mongostore.Index{
		{Collection: TemplatesColl, Keys: bson.D{{Key: "account", Value: 1}, {Key: "trigger", Value: 1}, {Key: "language", Value: 1},
			{Key: "brand_id", Value: 1}, {Key: "property_id", Value: 1}}, Unique: true},
		{Collection: TemplatesColl, Keys: bson.D{{Key: "account", Value: 1}, {Key: "template_id", Value: 1}}},
	})
	if err != nil {
		return nil, fmt.Errorf("store: templates: %w", err)
	}
	return &Templates{coll: db.Collection(TemplatesColl), seqs: db.Collection(SettingsColl)}, nil
}

// templatesUnique: err is a unique index's refusal, as MongoDB (a duplicate key) or FerretDB
// on SQLite (an internal error naming the constraint, on an update) answers it.
func templatesUnique(err error) bool {
	return err != nil && (mongostore.IsDuplicate(err) || strings.Contains(err.Error(), "UNIQUE constraint failed"))
}

// nextID gives the account's next template id.
func (t *Templates) nextID(ctx context.Context, account string) (int64, error) {
	var out struct {
		Seq int64 `bson:"template_seq"`
	}
	err := t.seqs.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: account}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "template_seq", Value: int64(1)}}},
			{Key: "$setOnInsert", Value: bson.D{{Key: "account", Value: account}}}},
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&out)
	if templatesUnique(err) {
		return t.nextID(ctx, account) // the account's document created at the same moment: increment it
	}
	if err != nil {
		return 0, fmt.Errorf("store: template id: %w", err)
	}
	return out.Seq, nil
}

// Create saves a new template of the account (checked by the caller with template.Validate)
// and answers it with its id; a *TemplateConflictError when the account has one of the same
// trigger, language, brand and property.
func (t *Templates) Create(ctx context.Context, account string, tpl template.Template, now time.Time) (Template, error) {
	now = now.UTC().Truncate(time.Millisecond)
	// The key first, so that a conflict takes no id (the unique index decides a race).
	if err := t.conflict(ctx, account, tpl, 0); err != nil {
		return Template{}, err
	}
	for range 50 {
		id, err := t.nextID(ctx, account)
		if err != nil {
			return Template{}, err
		}
		d := templateDoc{ID: templatesKey(account, id), Account: account, TemplateID: id, Trigger: tpl.Trigger, Language: tpl.Language,
			BrandID: tpl.BrandID, PropertyID: tpl.PropertyID, Subject: tpl.Subject, HTML: tpl.HTML, Text: tpl.Text, Created: now, Updated: now}
		_, err = t.coll.InsertOne(ctx, d)
		if err == nil {
			return d.template(), nil
		}
		if !templatesUnique(err) {
			return Template{}, fmt.Errorf("store: template insert: %w", err)
		}
		// The key is taken (a conflict), or the id is: FerretDB increments the counter as a
		// read and a write, so two creates at once can be given one id; the insert is the
		// claim, and the one that lost takes the next.
		if cerr := t.conflict(ctx, account, tpl, 0); cerr != nil {
			return Template{}, cerr
		}
	}
	return Template{}, errors.New("store: template insert: no free id after 50 tries")
}

// Update replaces the wording and scope of the account's template id; ErrTemplateNotFound
// when it has none, a *TemplateConflictError when another of its templates has the new
// trigger, language, brand and property.
func (t *Templates) Update(ctx context.Context, account string, id int64, tpl template.Template, now time.Time) (Template, error) {
	// The key first, as Create: what stores answer when an update breaks a unique index
	// differs (MongoDB a duplicate key, FerretDB an internal error), and the index still
	// decides a race, after which the key is looked at again.
	if err := t.conflict(ctx, account, tpl, id); err != nil {
		return Template{}, err
	}
	var d templateDoc
	err := t.coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: templatesKey(account, id)}, {Key: "account", Value: account}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "trigger", Value: tpl.Trigger}, {Key: "language", Value: tpl.Language},
			{Key: "brand_id", Value: tpl.BrandID}, {Key: "property_id", Value: tpl.PropertyID}, {Key: "subject", Value: tpl.Subject},
			{Key: "html", Value: tpl.HTML}, {Key: "text", Value: tpl.Text}, {Key: "updated", Value: now.UTC().Truncate(time.Millisecond)}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return Template{}, ErrTemplateNotFound
	case err != nil:
		if cerr := t.conflict(ctx, account, tpl, id); cerr != nil {
			return Template{}, cerr
		}
		return Template{}, fmt.Errorf("store: template update: %w", err)
	}
	return d.template(), nil
}

// conflict answers the conflict with the account's template of tpl's key other than the
// template self (0: none), nil when it has none.
func (t *Templates) conflict(ctx context.Context, account string, tpl template.Template, self int64) error {
	var d templateDoc
	err := t.coll.FindOne(ctx, bson.D{{Key: "account", Value: account}, {Key: "trigger", Value: tpl.Trigger},
		{Key: "language", Value: tpl.Language}, {Key: "brand_id", Value: tpl.BrandID}, {Key: "property_id", Value: tpl.PropertyID},
		{Key: "template_id", Value: bson.D{{Key: "$ne", Value: self}}}}).Decode(&d)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return nil
	case err != nil:
		return fmt.Errorf("store: template conflict: %w", err)
	}
	return &TemplateConflictError{Existing: d.TemplateID, Key: template.Template{Trigger: tpl.Trigger, Language: tpl.Language,
		BrandID: tpl.BrandID, PropertyID: tpl.PropertyID}}
}

// Get answers the account's template id; ErrTemplateNotFound when it has none.
func (t *Templates) Get(ctx context.Context, account string, id int64) (Template, error) {
	var d templateDoc
	err := t.coll.FindOne(ctx, bson.D{{Key: "_id", Value: templatesKey(account, id)}, {Key: "account", Value: account}}).Decode(&d)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return Template{}, ErrTemplateNotFound
	case err != nil:
		return Template{}, fmt.Errorf("store: template get: %w", err)
	}
	return d.template(), nil
}

// TemplateFilter narrows List: each field set must match ("" and 0: any).
type TemplateFilter struct {
	Trigger    string
	Language   string
	BrandID    int64
	PropertyID int64
}

// List answers the account's templates that match f, by id.
func (t *Templates) List(ctx context.Context, account string, f TemplateFilter) ([]Template, error) {
	q := bson.D{{Key: "account", Value: account}}
	if f.Trigger != "" {
		q = append(q, bson.E{Key: "trigger", Value: f.Trigger})
	}
	if f.Language != "" {
		q = append(q, bson.E{Key: "language", Value: f.Language})
	}
	if f.BrandID != 0 {
		q = append(q, bson.E{Key: "brand_id", Value: f.BrandID})
	}
	if f.PropertyID != 0 {
		q = append(q, bson.E{Key: "property_id", Value: f.PropertyID})
	}
	return t.find(ctx, q)
}

func (t *Templates) find(ctx context.Context, q bson.D) ([]Template, error) {
	cur, err := t.coll.Find(ctx, q, options.Find().SetSort(bson.D{{Key: "template_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("store: templates: %w", err)
	}
	var docs []templateDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("store: templates: %w", err)
	}
	out := make([]Template, len(docs))
	for i, d := range docs {
		out[i] = d.template()
	}
	return out, nil
}

// ForTrigger answers the account's templates of the trigger in the language and in
// template.Fallback (English), every brand and property, for template.Choose, which falls
// back to the account's English template before vros's English default.
func (t *Templates) ForTrigger(ctx context.Context, account, trigger, lang string) ([]template.Template, error) {
	langs := bson.A{lang}
	if lang != template.Fallback {
		langs = append(langs, template.Fallback)
	}
	all, err := t.find(ctx, bson.D{{Key: "account", Value: account}, {Key: "trigger", Value: trigger},
		{Key: "language", Value: bson.D{{Key: "$in", Value: langs}}}})
	if err != nil {
		return nil, err
	}
	out := make([]template.Template, len(all))
	for i, x := range all {
		out[i] = x.Template
	}
	return out, nil
}

// Delete deletes the account's template id; ErrTemplateNotFound when it has none.
func (t *Templates) Delete(ctx context.Context, account string, id int64) error {
	res, err := t.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: templatesKey(account, id)}, {Key: "account", Value: account}})
	if err != nil {
		return fmt.Errorf("store: template delete: %w", err)
	}
	if res.DeletedCount == 0 {
		return ErrTemplateNotFound
	}
	return nil
}

// Erase deletes every template of the account (the account erased).
func (t *Templates) Erase(ctx context.Context, account string) error {
	if _, err := t.coll.DeleteMany(ctx, bson.D{{Key: "account", Value: account}}); err != nil {
		return fmt.Errorf("store: templates erase: %w", err)
	}
	return nil
}
