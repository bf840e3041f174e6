package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/messaging-svc/internal/mail"
	"github.com/vros/vros/messaging-svc/internal/trigger"
)

// AccountSettings are an account's messaging settings: its triggers' settings, the sender
// and the transport of its messages, the owner notices' addresses. The zero value (with the
// Account) is the defaults: every trigger on at its catalog offset, the operator's sender and
// transport, no owner notice.
type AccountSettings struct {
	Account                        string
	Triggers                       trigger.Settings
	FromName, FromAddress, ReplyTo string        // "" → the operator's default
	Notify                         []string      // the owner notices' addresses (none → no owner notice)
	SMTP                           *SMTPSettings // nil → the operator's default transport
	Version                        int64         // 0: none saved; +1 at every save
}

// SMTPSettings are an account's own SMTP server. Password is the password as SealSMTPPassword
// sealed it for the account (libs/seal's text, as bytes; empty: none, AUTH not used); open it
// with OpenSMTPPassword.
type SMTPSettings struct {
	Host     string
	Port     int
	Username string
	Password []byte
	TLS      mail.TLSMode
}

// SMTPPasswordContext is the libs/seal context an account's SMTP password is sealed with:
// bound to the account, so that a sealed password copied to another account does not open.
func SMTPPasswordContext(account string) string { return account + ":messaging:smtp:password" }

// SealSMTPPassword seals an account's SMTP password for SMTPSettings.Password ("" → nil).
func SealSMTPPassword(box *seal.Box, account, password string) []byte {
	if password == "" {
		return nil
	}
	return []byte(box.Seal(password, SMTPPasswordContext(account)))
}

// OpenSMTPPassword opens SMTPSettings.Password of the account (nil → "").
func OpenSMTPPassword(box *seal.Box, account string, sealed []byte) (string, error) {
	if len(sealed) == 0 {
		return "", nil
	}
	plain, err := box.Open(string(sealed), SMTPPasswordContext(account))
	if err != nil {
		return "", fmt.Errorf("store: the SMTP password of account %s: %w", account, err)
	}
	return plain, nil
}

// Delivery is the part of the settings messaging-settings changes: the sender, the owner
// notices' addresses and the transport.
type Delivery struct {
	FromName, FromAddress, ReplyTo string
	Notify                         []string
	// SMTP nil: the operator's transport (the stored server and password dropped).
	SMTP *SMTPSettings
	// KeepPassword keeps the stored SMTP password (SMTP.Password ignored): a change that
	// does not send the password.
	KeepPassword bool
}

// settingsDoc is the account's `settings` document (_id: the account). template_seq, kept in
// the same document, is the Templates' id counter.
type settingsDoc struct {
	ID          string       `bson:"_id"`
	Account     string       `bson:"account"`
	Triggers    []triggerDoc `bson:"triggers,omitempty"`
	FromName    string       `bson:"from_name,omitempty"`
	FromAddress string       `bson:"from_address,omitempty"`
	ReplyTo     string       `bson:"reply_to,omitempty"`
	Notify      []string     `bson:"notify,omitempty"`
	SMTP        *smtpDoc     `bson:"smtp,omitempty"`
	Version     int64        `bson:"version"`
	Updated     time.Time    `bson:"updated,omitempty"`
}

// triggerDoc is one trigger's setting that differs from the catalog's default.
type triggerDoc struct {
	Trigger string `bson:"trigger"`
	Enabled bool   `bson:"enabled"`
	Days    int    `bson:"days"`
	At      string `bson:"at,omitempty"` // HH:MM (scheduled triggers)
}

type smtpDoc struct {
	Host     string `bson:"host"`
	Port     int    `bson:"port"`
	Username string `bson:"username,omitempty"`
	Password []byte `bson:"password,omitempty"`
	TLS      string `bson:"tls"`
}

// Settings is the `settings` collection: one document per account.
type Settings struct{ coll *mongo.Collection }

// NewSettings declares the settings' collection and returns the store (it needs no index
// but _id).
func NewSettings(ctx context.Context, db *mongo.Database) (*Settings, error) {
	if err := mongostore.Ensure(ctx, db, []string{SettingsColl}, nil); err != nil {
		return nil, fmt.Errorf("store: settings: %w", err)
	}
	return &Settings{coll: db.Collection(SettingsColl)}, nil
}

// Get answers the account's settings: the defaults (Version 0) when none are saved.
func (s *Settings) Get(ctx context.Context, account string) (AccountSettings, error) {
	var d settingsDoc
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: account}, {Key: "account", Value: account}}).Decode(&d)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return AccountSettings{Account: account}, nil
	case err != nil:
		return AccountSettings{}, fmt.Errorf("store: settings of %s: %w", account, err)
	}
	return d.settings(account)
}

func (d settingsDoc) settings(account string) (AccountSettings, error) {
	out := AccountSettings{Account: account, FromName: d.FromName, FromAddress: d.FromAddress, ReplyTo: d.ReplyTo,
		Notify: d.Notify, Version: d.Version}
	changes := make([]trigger.Change, 0, len(d.Triggers))
	for _, t := range d.Triggers {
		c := trigger.Change{Trigger: t.Trigger, Enabled: &t.Enabled}
		if def, ok := trigger.Lookup(t.Trigger); ok && def.Scheduled() {
			c.Days, c.At = &t.Days, &t.At
		}
		changes = append(changes, c)
	}
	var err error
	if out.Triggers, err = (trigger.Settings{}).With(changes...); err != nil {
		return AccountSettings{}, fmt.Errorf("store: settings of %s: stored triggers: %w", account, err)
	}
	if d.SMTP != nil {
		out.SMTP = &SMTPSettings{Host: d.SMTP.Host, Port: d.SMTP.Port, Username: d.SMTP.Username, Password: d.SMTP.Password,
			TLS: mail.TLSMode(d.SMTP.TLS)}
	}
	return out, nil
}

// SetTriggers saves the account's triggers' settings (their other settings kept) and answers
// the settings saved.
func (s *Settings) SetTriggers(ctx context.Context, account string, ts trigger.Settings, now time.Time) (AccountSettings, error) {
	var docs []triggerDoc
	for _, e := range ts.All() {
		if e.Setting == trigger.Default(e.Def) {
			continue
		}
		d := triggerDoc{Trigger: e.Name, Enabled: e.Enabled}
		if e.Scheduled() {
			d.Days, d.At = e.Days, e.At.String()
		}
		docs = append(docs, d)
	}
	set := bson.D{{Key: "account", Value: account}, {Key: "updated", Value: now.UTC()}}
	if len(docs) > 0 {
		set = append(set, bson.E{Key: "triggers", Value: docs})
	}
	upd := bson.D{{Key: "$set", Value: set}, {Key: "$inc", Value: bson.D{{Key: "version", Value: int64(1)}}}}
	if len(docs) == 0 {
		upd = append(upd, bson.E{Key: "$unset", Value: bson.D{{Key: "triggers", Value: ""}}})
	}
	return s.update(ctx, account, upd)
}

// SetDelivery saves the account's sender, owner notices' addresses and transport (its
// triggers' settings kept) and answers the settings saved.
func (s *Settings) SetDelivery(ctx context.Context, account string, d Delivery, now time.Time) (AccountSettings, error) {
	set := bson.D{{Key: "account", Value: account}, {Key: "updated", Value: now.UTC()}}
	var unset bson.D
	field := func(name, v string) {
		if v == "" {
			unset = append(unset, bson.E{Key: name, Value: ""})
		} else {
			set = append(set, bson.E{Key: name, Value: v})
		}
	}
	field("from_name", d.FromName)
	field("from_address", d.FromAddress)
	field("reply_to", d.ReplyTo)
	if len(d.Notify) == 0 {
		unset = append(unset, bson.E{Key: "notify", Value: ""})
	} else {
		set = append(set, bson.E{Key: "notify", Value: d.Notify})
	}
	switch {
	case d.SMTP == nil:
		unset = append(unset, bson.E{Key: "smtp", Value: ""})
	case d.KeepPassword:
		// Field by field, so that the stored password stays (and the server, when none was
		// stored, is created without one).
		set = append(set, bson.E{Key: "smtp.host", Value: d.SMTP.Host}, bson.E{Key: "smtp.port", Value: d.SMTP.Port},
			bson.E{Key: "smtp.tls", Value: string(d.SMTP.TLS)})
		if d.SMTP.Username == "" {
			unset = append(unset, bson.E{Key: "smtp.username", Value: ""})
		} else {
			set = append(set, bson.E{Key: "smtp.username", Value: d.SMTP.Username})
		}
	default:
		set = append(set, bson.E{Key: "smtp", Value: smtpDoc{Host: d.SMTP.Host, Port: d.SMTP.Port, Username: d.SMTP.Username,
			Password: d.SMTP.Password, TLS: string(d.SMTP.TLS)}})
	}
	upd := bson.D{{Key: "$set", Value: set}, {Key: "$inc", Value: bson.D{{Key: "version", Value: int64(1)}}}}
	if len(unset) > 0 {
		upd = append(upd, bson.E{Key: "$unset", Value: unset})
	}
	return s.update(ctx, account, upd)
}

func (s *Settings) update(ctx context.Context, account string, upd bson.D) (AccountSettings, error) {
	var d settingsDoc
	err := s.coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: account}, {Key: "account", Value: account}}, upd,
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&d)
	if templatesUnique(err) {
		return s.update(ctx, account, upd) // the document created at the same moment: update it
	}
	if err != nil {
		return AccountSettings{}, fmt.Errorf("store: settings of %s: %w", account, err)
	}
	return d.settings(account)
}

// Erase deletes the account's settings (the account erased): its SMTP credentials with them.
func (s *Settings) Erase(ctx context.Context, account string) error {
	if _, err := s.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: account}, {Key: "account", Value: account}}); err != nil {
		return fmt.Errorf("store: settings erase: %w", err)
	}
	return nil
}
