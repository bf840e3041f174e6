package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/property-svc/internal/property"
)

// ICalRec is a property's iCal export link: the token of /ical/<token>.ics (32 random
// bytes, base64url), or Revoked with no token.
type ICalRec struct {
	Token     string    `bson:"token,omitempty"`
	Revoked   bool      `bson:"revoked,omitempty"`
	CreatedAt time.Time `bson:"created_at"`
}

// tokenHash is the hex SHA-256 of the token, what the property's events carry; empty when
// there is no token. A deleted property's events carry none (its link is dead).
func (r *ICalRec) tokenHash() string {
	if r == nil || r.Token == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(r.Token))
	return hex.EncodeToString(sum[:])
}

// liveICalHash is the hash a property's event carries: none once it is deleted.
func (r Record) liveICalHash() string {
	if r.Deleted {
		return ""
	}
	return r.ICal.tokenHash()
}

func icalLink(rec Record) property.ICalLink {
	l := property.ICalLink{PropertyID: rec.PropertyID, InternalCode: rec.InternalCode}
	if rec.ICal != nil {
		l.Token, l.Revoked, l.CreatedAt = rec.ICal.Token, rec.ICal.Revoked, rec.ICal.CreatedAt
	}
	return l
}

// ICalLink reads the export link of the live property of account with internal code code.
func (s *Store) ICalLink(ctx context.Context, account, code string) (property.ICalLink, error) {
	rec, err := s.resolve(ctx, account, property.PropertyRef{InternalCode: code})
	if err != nil {
		return property.ICalLink{}, err
	}
	return icalLink(rec), nil
}

// SetICalToken sets the export token of a live property (empty: revoked) in one write that
// bumps the version and records the property's event (type vros.property.updated), so that
// catalog-svc learns the new hash. Of concurrent writes the last one stands, and its event is
// the newest. With onlyIfNone the write is made only on a property that never had a link;
// when another write came first, the link it made is returned.
func (s *Store) SetICalToken(ctx context.Context, account, code, token string, onlyIfNone bool) (property.ICalLink, error) {
	pid, err := s.lookupCode(ctx, account, code)
	if err != nil {
		return property.ICalLink{}, err
	}
	ical := ICalRec{Token: token, Revoked: token == "", CreatedAt: s.now()}
	var where bson.D
	if onlyIfNone {
		where = bson.D{{Key: "ical", Value: bson.D{{Key: "$exists", Value: false}}}}
	}
	rec, err := s.updateWhere(ctx, recordID(account, pid), PropertyUpdated, where,
		bson.D{{Key: "$set", Value: bson.D{{Key: "ical", Value: ical}}}}, false)
	if onlyIfNone && errors.Is(err, property.ErrNotFound) {
		return s.ICalLink(ctx, account, code) // a link was made meanwhile (or the property is gone)
	}
	if err != nil {
		return property.ICalLink{}, err
	}
	return icalLink(rec), nil
}
