// Package store keeps channel distribution's records in integration-svc's MongoDB
// (docs/channels.md, "Model"): the accounts' connections (credentials sealed, inbound tokens
// kept as a hash) and mappings, the channel log and the reservation conflicts. It implements
// the ports channel.Connections, channel.Log and channel.Conflicts.
//
// Every document's _id starts with "<account>:" so that an account's erasure finds all of it
// by _id alone (mongostore.OwnedBy).
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/libs/seal"
)

// Collections.
const (
	ConnectionsColl = "chan_connections"
	MappingsColl    = "chan_mappings"
	LogColl         = "chan_log"
	ConflictsColl   = "chan_conflicts"
	CountersColl    = "chan_counters"
)

// LogRetention is how long a log entry is kept.
const LogRetention = 30 * 24 * time.Hour

// MaxBody is the longest request or response body a log entry keeps; a longer one is cut
// and the entry marked truncated.
const MaxBody = 64 << 10

// MaxLogLimit is the most entries one List answers; DefaultLogLimit when none is asked.
const (
	MaxLogLimit     = 200
	DefaultLogLimit = 50
)

// Stores are the three stores over one database.
type Stores struct {
	Connections *Connections
	Log         *Log
	Conflicts   *Conflicts
}

// Open declares the collections and indexes and returns the stores. box seals the
// connections' credentials.
func Open(ctx context.Context, db *mongo.Database, box *seal.Box) (*Stores, error) {
	if box == nil {
		return nil, errors.New("channel store: no encryption key")
	}
	err := mongostore.Ensure(ctx, db, append(mongostore.WithLocks(ConnectionsColl, MappingsColl, ConflictsColl), LogColl, CountersColl, outbox.Collection),
		[]mongostore.Index{
			{Collection: ConnectionsColl, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "connection_id", Value: 1}}},
			{Collection: ConnectionsColl, Keys: bson.D{{Key: "token_hash", Value: 1}}},
			{Collection: ConnectionsColl, Keys: bson.D{{Key: "adapter", Value: 1}, {Key: "enabled", Value: 1}}},
			{Collection: MappingsColl, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "connection_id", Value: 1},
				{Key: "remote_property_id", Value: 1}, {Key: "room_type_id", Value: 1}}, Unique: true},
			{Collection: MappingsColl, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "property_id", Value: 1}}},
			{Collection: LogColl, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "log_id", Value: -1}}},
			{Collection: ConflictsColl, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "connection_id", Value: 1},
				{Key: "revision_id", Value: 1}}, Unique: true},
			{Collection: ConflictsColl, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "conflict_id", Value: 1}}},
			// The conflicts' event intents (Conflicts.Attach).
			outbox.Index,
		})
	if err != nil {
		return nil, err
	}
	// The log's age limit: a TTL index where the server has them (MongoDB); FerretDB has
	// none, so Log.Prune (run periodically by the wiring) deletes old entries as well.
	_, err = db.Collection(LogColl).Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "at", Value: 1}},
		Options: options.Index().SetExpireAfterSeconds(int32(LogRetention / time.Second))})
	if err != nil && !notImplemented(err) {
		return nil, fmt.Errorf("create the log's TTL index: %w", err)
	}
	counters := db.Collection(CountersColl)
	return &Stores{
		Connections: &Connections{conns: db.Collection(ConnectionsColl), maps: db.Collection(MappingsColl), box: box,
			ids: mongostore.NewSequence(counters, "connection", 10)},
		Log:       &Log{coll: db.Collection(LogColl)},
		Conflicts: &Conflicts{coll: db.Collection(ConflictsColl), ids: mongostore.NewSequence(counters, "conflict", 10)},
	}, nil
}

// isUniqueViolation: err is a unique index's refusal, as MongoDB (a duplicate key) or
// FerretDB on SQLite (an internal error naming the constraint) answers an update.
func isUniqueViolation(err error) bool {
	return err != nil && (mongostore.IsDuplicate(err) || strings.Contains(err.Error(), "UNIQUE constraint failed"))
}

func notImplemented(err error) bool {
	var ce mongo.CommandError
	return errors.As(err, &ce) && (ce.Code == 238 || ce.Name == "NotImplemented")
}

// Erase deletes everything the account holds in the three stores.
// Each conflict's key on vros.integration.v1 gets a tombstone (Conflicts.Attach).
func (s *Stores) Erase(ctx context.Context, account string) error {
	intents, err := s.Conflicts.beginErase(ctx, account)
	defer func() {
		for _, in := range intents {
			s.Conflicts.done(in)
		}
	}()
	if err != nil {
		return err
	}
	db := s.Log.coll.Database()
	for _, c := range []string{MappingsColl, ConnectionsColl, LogColl, ConflictsColl,
		ConnectionsColl + "_locks", MappingsColl + "_locks", ConflictsColl + "_locks"} {
		if _, err := db.Collection(c).DeleteMany(ctx, bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}}); err != nil {
			return err
		}
	}
	return nil
}

// The stores implement the domain's ports.
var (
	_ channel.Connections = (*Connections)(nil)
	_ channel.Log         = (*Log)(nil)
	_ channel.Conflicts   = (*Conflicts)(nil)
)

// ---- connections and mappings

// Connections keeps the connections and their mappings.
type Connections struct {
	conns, maps *mongo.Collection
	box         *seal.Box
	ids         *mongostore.Sequence
}

type connDoc struct {
	ID           string `bson:"_id"`
	Account      string `bson:"account_id"`
	ConnectionID int64  `bson:"connection_id"`
	Adapter      string `bson:"adapter"`
	Endpoint     string `bson:"endpoint"`
	// Credentials are the channel.Credentials as JSON, sealed with the context
	// "<account>:channel:<id>".
	Credentials string    `bson:"credentials"`
	Channel     string    `bson:"channel"`
	Enabled     bool      `bson:"enabled"`
	TokenHash   string    `bson:"token_hash"`
	Days        int       `bson:"days"`
	CreatedAt   time.Time `bson:"created_at"`
	UpdatedAt   time.Time `bson:"updated_at"`
}

type sealedCredentials struct {
	APIKey   string `json:"api_key,omitempty"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

func connKey(account string, id int64) string { return account + ":" + strconv.FormatInt(id, 10) }

// SealContext is the context a connection's credentials are sealed with.
func SealContext(account string, id int64) string {
	return account + ":channel:" + strconv.FormatInt(id, 10)
}

// TokenHash is how an inbound token is kept: its SHA-256, hex. The token is 32 random bytes
// (channel-connection's create and rotate_token), so no salt or stretching is needed.
func TokenHash(adapter, token string) string {
	h := sha256.Sum256([]byte(adapter + ":" + token))
	return hex.EncodeToString(h[:])
}

func (s *Connections) toDoc(c channel.Connection) (connDoc, error) {
	creds, err := json.Marshal(sealedCredentials(c.Credentials))
	if err != nil {
		return connDoc{}, err
	}
	d := connDoc{ID: connKey(c.Account, c.ID), Account: c.Account, ConnectionID: c.ID, Adapter: c.Adapter,
		Endpoint: c.Endpoint, Credentials: s.box.Seal(string(creds), SealContext(c.Account, c.ID)), Channel: c.Channel,
		Enabled: c.Enabled, Days: c.Days, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
	if c.InboundToken != "" {
		d.TokenHash = TokenHash(c.Adapter, c.InboundToken)
	}
	return d, nil
}

func (s *Connections) fromDoc(d connDoc) (channel.Connection, error) {
	c := channel.Connection{Account: d.Account, ID: d.ConnectionID, Adapter: d.Adapter, Endpoint: d.Endpoint,
		Channel: d.Channel, Enabled: d.Enabled, Days: d.Days, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	if d.Credentials != "" {
		plain, err := s.box.Open(d.Credentials, SealContext(d.Account, d.ConnectionID))
		if err != nil {
			// The error names the connection, never the value.
			return c, fmt.Errorf("connection %d: credentials: %w", d.ConnectionID, err)
		}
		var sc sealedCredentials
		if err := json.Unmarshal([]byte(plain), &sc); err != nil {
			return c, fmt.Errorf("connection %d: credentials are not readable", d.ConnectionID)
		}
		c.Credentials = channel.Credentials(sc)
	}
	return c, nil
}

// NextID returns a new connection id.
func (s *Connections) NextID(ctx context.Context) (int64, error) { return s.ids.Next(ctx) }

// AddConnection stores a new connection; c.InboundToken is kept as its hash.
func (s *Connections) AddConnection(ctx context.Context, c channel.Connection) error {
	d, err := s.toDoc(c)
	if err != nil {
		return err
	}
	_, err = s.conns.InsertOne(ctx, d)
	return err
}

func (s *Connections) read(ctx context.Context, key string) (*connDoc, error) {
	var d connDoc
	err := s.conns.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// Connection returns an account's connection (its InboundToken empty: only its hash is kept).
func (s *Connections) Connection(ctx context.Context, account string, id int64) (channel.Connection, error) {
	d, err := s.read(ctx, connKey(account, id))
	if err != nil {
		return channel.Connection{}, err
	}
	if d == nil {
		return channel.Connection{}, channel.ErrNotFound
	}
	return s.fromDoc(*d)
}

// ConnectionByToken finds the connection of an inbound token, of any account; the answer
// carries the token.
func (s *Connections) ConnectionByToken(ctx context.Context, adapter, token string) (channel.Connection, error) {
	if token == "" {
		return channel.Connection{}, channel.ErrNotFound
	}
	var d connDoc
	err := s.conns.FindOne(ctx, bson.D{{Key: "token_hash", Value: TokenHash(adapter, token)}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) || (err == nil && d.Adapter != adapter) {
		return channel.Connection{}, channel.ErrNotFound
	}
	if err != nil {
		return channel.Connection{}, err
	}
	c, err := s.fromDoc(d)
	c.InboundToken = token
	return c, err
}

// list returns the connections filter selects. One whose credentials do not open (the
// encryption key was changed) is left out when sending (forSending: no request could be
// authenticated), and listed with empty credentials otherwise, so that its owner sees it and
// sets them again.
func (s *Connections) list(ctx context.Context, filter bson.D, forSending bool) ([]channel.Connection, error) {
	cur, err := s.conns.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "account_id", Value: 1}, {Key: "connection_id", Value: 1}}))
	if err != nil {
		return nil, err
	}
	var docs []connDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]channel.Connection, 0, len(docs))
	for _, d := range docs {
		c, err := s.fromDoc(d)
		if err != nil && forSending {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// ListConnections returns an account's connections by id (one whose credentials do not
// open, with none).
func (s *Connections) ListConnections(ctx context.Context, account string) ([]channel.Connection, error) {
	return s.list(ctx, bson.D{{Key: "account_id", Value: account}}, false)
}

// EnabledConnections lists every account's enabled connections of an adapter (but those
// whose credentials do not open).
func (s *Connections) EnabledConnections(ctx context.Context, adapter string) ([]channel.Connection, error) {
	return s.list(ctx, bson.D{{Key: "adapter", Value: adapter}, {Key: "enabled", Value: true}}, true)
}

// ModifyConnection runs change on the connection as stored now and stores what it leaves,
// under the connection's lease (so that two changes at once both stay). change sees the
// credentials opened and InboundToken empty; a token it sets replaces the kept one. The
// account, id and adapter stay as they are.
func (s *Connections) ModifyConnection(ctx context.Context, account string, id int64, change func(c *channel.Connection) error) (channel.Connection, error) {
	var out channel.Connection
	key := connKey(account, id)
	err := mongostore.WithLease(ctx, s.conns, key, func() error {
		d, err := s.read(ctx, key)
		if err != nil {
			return err
		}
		if d == nil {
			return channel.ErrNotFound
		}
		c, err := s.fromDoc(*d)
		if err != nil {
			return err
		}
		if err := change(&c); err != nil {
			return err
		}
		c.Account, c.ID, c.Adapter = d.Account, d.ConnectionID, d.Adapter
		nd, err := s.toDoc(c)
		if err != nil {
			return err
		}
		if c.InboundToken == "" {
			nd.TokenHash = d.TokenHash
		}
		if _, err := s.conns.ReplaceOne(ctx, bson.D{{Key: "_id", Value: key}}, nd); err != nil {
			return err
		}
		out = c
		return nil
	})
	return out, err
}

// DeleteConnection deletes a connection and its mappings. It holds the connection's lease,
// as AddMapping does, so that no mapping is added to a connection being deleted.
func (s *Connections) DeleteConnection(ctx context.Context, account string, id int64) error {
	key := connKey(account, id)
	return mongostore.WithLease(ctx, s.conns, key, func() error {
		d, err := s.read(ctx, key)
		if err != nil {
			return err
		}
		if d == nil {
			return channel.ErrNotFound
		}
		if _, err := s.maps.DeleteMany(ctx, bson.D{{Key: "_id", Value: mongostore.OwnedBy(key)}}); err != nil {
			return err
		}
		_, err = s.conns.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}})
		return err
	})
}

type planDoc struct {
	RatePlanID       int64  `bson:"rate_plan_id"`
	RemoteRatePlanID string `bson:"remote_rate_plan_id"`
}

type mappingDoc struct {
	ID               string    `bson:"_id"`
	Account          string    `bson:"account_id"`
	ConnectionID     int64     `bson:"connection_id"`
	PropertyID       int64     `bson:"property_id"`
	InternalCode     string    `bson:"internal_code"`
	RemotePropertyID string    `bson:"remote_property_id"`
	RoomTypeID       string    `bson:"room_type_id"`
	RatePlans        []planDoc `bson:"rate_plans"`
	Enabled          bool      `bson:"enabled"`
	CreatedAt        time.Time `bson:"created_at"`
	UpdatedAt        time.Time `bson:"updated_at"`
}

func mappingKey(account string, connection, property int64) string {
	return connKey(account, connection) + ":" + strconv.FormatInt(property, 10)
}

func toMappingDoc(m channel.Mapping) mappingDoc {
	plans := make([]planDoc, len(m.RatePlans))
	for i, p := range m.RatePlans {
		plans[i] = planDoc(p)
	}
	return mappingDoc{ID: mappingKey(m.Account, m.ConnectionID, m.PropertyID), Account: m.Account, ConnectionID: m.ConnectionID,
		PropertyID: m.PropertyID, InternalCode: m.InternalCode, RemotePropertyID: m.RemotePropertyID, RoomTypeID: m.RoomTypeID,
		RatePlans: plans, Enabled: m.Enabled, CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC()}
}

func fromMappingDoc(d mappingDoc) channel.Mapping {
	plans := make([]channel.PlanMapping, len(d.RatePlans))
	for i, p := range d.RatePlans {
		plans[i] = channel.PlanMapping(p)
	}
	return channel.Mapping{Account: d.Account, ConnectionID: d.ConnectionID, PropertyID: d.PropertyID, InternalCode: d.InternalCode,
		RemotePropertyID: d.RemotePropertyID, RoomTypeID: d.RoomTypeID, RatePlans: plans, Enabled: d.Enabled,
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

// AddMapping stores a new mapping of an existing connection: channel.ErrNotFound when the
// connection is gone, channel.ErrPropertyMapped when the property has a mapping on it,
// channel.ErrRoomMapped when the remote property and room type are another property's.
func (s *Connections) AddMapping(ctx context.Context, m channel.Mapping) error {
	key := connKey(m.Account, m.ConnectionID)
	return mongostore.WithLease(ctx, s.conns, key, func() error {
		c, err := s.read(ctx, key)
		if err != nil {
			return err
		}
		if c == nil {
			return channel.ErrNotFound
		}
		d := toMappingDoc(m)
		_, err = s.maps.InsertOne(ctx, d)
		if mongostore.IsDuplicate(err) {
			return s.whichDuplicate(ctx, d.ID)
		}
		return err
	})
}

// whichDuplicate tells which of the mapping's unique keys an insert or replace of document
// id broke.
func (s *Connections) whichDuplicate(ctx context.Context, id string) error {
	n, err := s.maps.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return err
	}
	if n > 0 {
		return channel.ErrPropertyMapped
	}
	return channel.ErrRoomMapped
}

func (s *Connections) readMapping(ctx context.Context, key string) (*mappingDoc, error) {
	var d mappingDoc
	err := s.maps.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// Mapping returns the mapping of a property on a connection.
func (s *Connections) Mapping(ctx context.Context, account string, connection, property int64) (channel.Mapping, error) {
	d, err := s.readMapping(ctx, mappingKey(account, connection, property))
	if err != nil {
		return channel.Mapping{}, err
	}
	if d == nil {
		return channel.Mapping{}, channel.ErrNotFound
	}
	return fromMappingDoc(*d), nil
}

func (s *Connections) mappings(ctx context.Context, filter bson.D) ([]channel.Mapping, error) {
	cur, err := s.maps.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "connection_id", Value: 1}, {Key: "property_id", Value: 1}}))
	if err != nil {
		return nil, err
	}
	var docs []mappingDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]channel.Mapping, 0, len(docs))
	for _, d := range docs {
		out = append(out, fromMappingDoc(d))
	}
	return out, nil
}

// Mappings lists the account's mappings (connection or property > 0: theirs only), by
// connection and property.
func (s *Connections) Mappings(ctx context.Context, account string, connection, property int64) ([]channel.Mapping, error) {
	filter := bson.D{{Key: "account_id", Value: account}}
	if connection > 0 {
		filter = append(filter, bson.E{Key: "connection_id", Value: connection})
	}
	if property > 0 {
		filter = append(filter, bson.E{Key: "property_id", Value: property})
	}
	return s.mappings(ctx, filter)
}

// MappingByRoom finds the mapping of a channel manager's property and room type.
func (s *Connections) MappingByRoom(ctx context.Context, account string, connection int64, remoteProperty, roomType string) (channel.Mapping, error) {
	var d mappingDoc
	err := s.maps.FindOne(ctx, bson.D{{Key: "account_id", Value: account}, {Key: "connection_id", Value: connection},
		{Key: "remote_property_id", Value: remoteProperty}, {Key: "room_type_id", Value: roomType}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return channel.Mapping{}, channel.ErrNotFound
	}
	if err != nil {
		return channel.Mapping{}, err
	}
	return fromMappingDoc(d), nil
}

// ModifyMapping runs change on the mapping as stored now and stores what it leaves, under
// the mapping's lease. The account, connection and property stay as they are;
// channel.ErrRoomMapped when the new remote ids are another property's.
func (s *Connections) ModifyMapping(ctx context.Context, account string, connection, property int64, change func(m *channel.Mapping) error) (channel.Mapping, error) {
	var out channel.Mapping
	key := mappingKey(account, connection, property)
	err := mongostore.WithLease(ctx, s.maps, key, func() error {
		d, err := s.readMapping(ctx, key)
		if err != nil {
			return err
		}
		if d == nil {
			return channel.ErrNotFound
		}
		m := fromMappingDoc(*d)
		if err := change(&m); err != nil {
			return err
		}
		m.Account, m.ConnectionID, m.PropertyID = d.Account, d.ConnectionID, d.PropertyID
		if m.RemotePropertyID != d.RemotePropertyID || m.RoomTypeID != d.RoomTypeID {
			// Looked up first: FerretDB answers an update that breaks a unique index with
			// an internal error, not a duplicate key. The index still settles a race.
			other, err := s.MappingByRoom(ctx, account, connection, m.RemotePropertyID, m.RoomTypeID)
			switch {
			case err == nil && other.PropertyID != property:
				return channel.ErrRoomMapped
			case err != nil && !errors.Is(err, channel.ErrNotFound):
				return err
			}
		}
		res, err := s.maps.ReplaceOne(ctx, bson.D{{Key: "_id", Value: key}}, toMappingDoc(m))
		if isUniqueViolation(err) {
			return channel.ErrRoomMapped
		}
		if err != nil {
			return err
		}
		if res.MatchedCount == 0 {
			return channel.ErrNotFound // deleted meanwhile (DeleteConnection does not take this lease)
		}
		out = m
		return nil
	})
	return out, err
}

// DeleteMapping deletes the mapping of a property on a connection.
func (s *Connections) DeleteMapping(ctx context.Context, account string, connection, property int64) error {
	res, err := s.maps.DeleteOne(ctx, bson.D{{Key: "_id", Value: mappingKey(account, connection, property)}})
	if err != nil {
		return err
	}
	if res.DeletedCount == 0 {
		return channel.ErrNotFound
	}
	return nil
}

// Erase deletes the account's connections and mappings.
func (s *Connections) Erase(ctx context.Context, account string) error {
	for _, c := range []*mongo.Collection{s.maps, s.conns} {
		if _, err := c.DeleteMany(ctx, bson.D{{Key: "_id", Value: mongostore.OwnedBy(account)}}); err != nil {
			return err
		}
	}
	return nil
}

// ---- the log

// Log keeps the channel log. Entry ids grow with time (the microsecond of the append, made
// unique), so that "newest first" is id order and a list's cursor is the last id seen.
type Log struct {
	coll *mongo.Collection
}

type logDoc struct {
	ID           string    `bson:"_id"`
	Account      string    `bson:"account_id"`
	LogID        int64     `bson:"log_id"`
	ConnectionID int64     `bson:"connection_id"`
	PropertyID   int64     `bson:"property_id"`
	Direction    string    `bson:"direction"`
	Kind         string    `bson:"kind"`
	Status       string    `bson:"status"`
	HTTPStatus   int       `bson:"http_status"`
	Request      string    `bson:"request"`
	Response     string    `bson:"response"`
	Truncated    bool      `bson:"truncated"`
	Error        string    `bson:"error"`
	From         string    `bson:"from,omitempty"`
	To           string    `bson:"to,omitempty"`
	At           time.Time `bson:"at"`
	DurationMS   int64     `bson:"duration_ms"`
}

// Cut returns s cut to at most max bytes at a character boundary, and whether it was cut.
func Cut(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// Append stores an entry (its ID and, when zero, At are set here); bodies longer than
// MaxBody are cut and the entry marked truncated.
func (l *Log) Append(ctx context.Context, e channel.LogEntry) error {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	req, cut1 := Cut(e.Request, MaxBody)
	resp, cut2 := Cut(e.Response, MaxBody)
	d := logDoc{Account: e.Account, ConnectionID: e.ConnectionID, PropertyID: e.PropertyID, Direction: e.Direction,
		Kind: e.Kind, Status: e.Status, HTTPStatus: e.HTTPStatus, Request: req, Response: resp,
		Truncated: e.Truncated || cut1 || cut2, Error: e.Error, From: e.From, To: e.To, At: e.At.UTC(),
		DurationMS: e.Duration.Milliseconds()}
	id := time.Now().UnixMicro()
	for range 64 {
		d.LogID, d.ID = id, connKey(e.Account, id)
		_, err := l.coll.InsertOne(ctx, d)
		if !mongostore.IsDuplicate(err) {
			return err
		}
		id++ // another entry of the account took this microsecond
	}
	return fmt.Errorf("log entry of %s: no free id", e.Account)
}

func fromLogDoc(d logDoc) channel.LogEntry {
	return channel.LogEntry{Account: d.Account, ID: d.LogID, ConnectionID: d.ConnectionID, PropertyID: d.PropertyID,
		Direction: d.Direction, Kind: d.Kind, Status: d.Status, HTTPStatus: d.HTTPStatus, Request: d.Request,
		Response: d.Response, Truncated: d.Truncated, Error: d.Error, From: d.From, To: d.To, At: d.At,
		Duration: time.Duration(d.DurationMS) * time.Millisecond}
}

// List returns an account's entries matching f, newest first, at most f.Limit (≤ 0:
// DefaultLogLimit; at most MaxLogLimit); f.Cursor > 0 continues after that id. Q matches
// the bodies and the error, case-insensitively, as plain text.
func (l *Log) List(ctx context.Context, account string, f channel.LogFilter) ([]channel.LogEntry, error) {
	filter := bson.D{{Key: "account_id", Value: account}}
	if f.Cursor > 0 {
		filter = append(filter, bson.E{Key: "log_id", Value: bson.D{{Key: "$lt", Value: f.Cursor}}})
	}
	if f.ConnectionID > 0 {
		filter = append(filter, bson.E{Key: "connection_id", Value: f.ConnectionID})
	}
	if f.PropertyID > 0 {
		filter = append(filter, bson.E{Key: "property_id", Value: f.PropertyID})
	}
	if f.Kind != "" {
		filter = append(filter, bson.E{Key: "kind", Value: f.Kind})
	}
	if f.Status != "" {
		filter = append(filter, bson.E{Key: "status", Value: f.Status})
	}
	if !f.From.IsZero() || !f.To.IsZero() {
		r := bson.D{}
		if !f.From.IsZero() {
			r = append(r, bson.E{Key: "$gte", Value: f.From.UTC()})
		}
		if !f.To.IsZero() {
			r = append(r, bson.E{Key: "$lt", Value: f.To.UTC()})
		}
		filter = append(filter, bson.E{Key: "at", Value: r})
	}
	if q := strings.TrimSpace(f.Q); q != "" {
		rx := bson.Regex{Pattern: regexpQuote(q), Options: "i"}
		filter = append(filter, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: "request", Value: rx}}, bson.D{{Key: "response", Value: rx}}, bson.D{{Key: "error", Value: rx}}}})
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultLogLimit
	}
	limit = min(limit, MaxLogLimit)
	cur, err := l.coll.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "log_id", Value: -1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, err
	}
	var docs []logDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]channel.LogEntry, 0, len(docs))
	for _, d := range docs {
		out = append(out, fromLogDoc(d))
	}
	return out, nil
}

// regexpQuote escapes the characters a regular expression reads specially.
func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Get returns an account's entry.
func (l *Log) Get(ctx context.Context, account string, id int64) (channel.LogEntry, error) {
	var d logDoc
	err := l.coll.FindOne(ctx, bson.D{{Key: "_id", Value: connKey(account, id)}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return channel.LogEntry{}, channel.ErrNotFound
	}
	if err != nil {
		return channel.LogEntry{}, err
	}
	return fromLogDoc(d), nil
}

// Prune deletes the entries older than LogRetention before now (where the server has no TTL
// index; harmless where it has one).
func (l *Log) Prune(ctx context.Context, now time.Time) error {
	_, err := l.coll.DeleteMany(ctx, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: now.Add(-LogRetention).UTC()}}}})
	return err
}

// ---- conflicts

// Conflicts keeps the reservation conflicts.
type Conflicts struct {
	coll *mongo.Collection
	ids  *mongostore.Sequence
	ob   *outbox.Outbox // nil: no events (Attach)
}

type conflictDoc struct {
	ID            string     `bson:"_id"`
	Account       string     `bson:"account_id"`
	ConflictID    int64      `bson:"conflict_id"`
	ConnectionID  int64      `bson:"connection_id"`
	ReservationID string     `bson:"reservation_id"`
	RevisionID    string     `bson:"revision_id"`
	Channel       string     `bson:"channel"`
	PropertyID    int64      `bson:"property_id"`
	Checkin       string     `bson:"checkin"`
	Checkout      string     `bson:"checkout"`
	Reason        string     `bson:"reason"`
	Message       string     `bson:"message"`
	Nights        []string   `bson:"nights"`
	BookingIDs    []int64    `bson:"booking_ids"`
	GuestName     string     `bson:"guest_name"`
	Total         string     `bson:"total"`
	Currency      string     `bson:"currency"`
	CreatedAt     time.Time  `bson:"created_at"`
	ResolvedAt    *time.Time `bson:"resolved_at"`
	Note          string     `bson:"note"`
}

func toConflictDoc(c channel.Conflict) conflictDoc {
	d := conflictDoc{ID: connKey(c.Account, c.ID), Account: c.Account, ConflictID: c.ID, ConnectionID: c.ConnectionID,
		ReservationID: c.ReservationID, RevisionID: c.RevisionID, Channel: c.Channel, PropertyID: c.PropertyID,
		Checkin: c.Checkin, Checkout: c.Checkout, Reason: c.Reason, Message: c.Message, Nights: c.Nights,
		BookingIDs: c.BookingIDs, GuestName: c.GuestName, Total: c.Total, Currency: c.Currency,
		CreatedAt: c.CreatedAt.UTC(), ResolvedAt: c.ResolvedAt, Note: c.Note}
	if d.Nights == nil {
		d.Nights = []string{}
	}
	if d.BookingIDs == nil {
		d.BookingIDs = []int64{}
	}
	return d
}

func fromConflictDoc(d conflictDoc) channel.Conflict {
	return channel.Conflict{Account: d.Account, ID: d.ConflictID, ConnectionID: d.ConnectionID, ReservationID: d.ReservationID,
		RevisionID: d.RevisionID, Channel: d.Channel, PropertyID: d.PropertyID, Checkin: d.Checkin, Checkout: d.Checkout,
		Reason: d.Reason, Message: d.Message, Nights: d.Nights, BookingIDs: d.BookingIDs, GuestName: d.GuestName,
		Total: d.Total, Currency: d.Currency, CreatedAt: d.CreatedAt, ResolvedAt: d.ResolvedAt, Note: d.Note}
}

// Record stores c (its ID and, when zero, CreatedAt set here) once per account, connection
// and revision: false and the stored conflict when it was stored before.
func (s *Conflicts) Record(ctx context.Context, c channel.Conflict) (channel.Conflict, bool, error) {
	if prev, ok, err := s.byRevision(ctx, c); err != nil || ok {
		return prev, false, err
	}
	id, err := s.ids.Next(ctx)
	if err != nil {
		return channel.Conflict{}, false, err
	}
	c.ID = id
	if c.CreatedAt.IsZero() {
		c.CreatedAt = time.Now()
	}
	c.CreatedAt = c.CreatedAt.Truncate(time.Millisecond) // as stored
	c.ResolvedAt, c.Note = nil, ""
	d := toConflictDoc(c)
	// The event's intent first (docs/events.md, "Delivery: the outbox"): once the conflict is
	// stored its event reaches vros.integration.v1, even if Kafka is down now or this process
	// stops before the relay publishes it.
	in, err := s.begin(ctx, c.Account, id)
	if err != nil {
		return channel.Conflict{}, false, fmt.Errorf("conflict of revision %q: %w", c.RevisionID, err)
	}
	_, err = s.coll.InsertOne(ctx, d)
	s.done(in)
	if mongostore.IsDuplicate(err) {
		prev, ok, err := s.byRevision(ctx, c)
		if err == nil && !ok {
			err = fmt.Errorf("conflict of revision %q: duplicate but not found", c.RevisionID)
		}
		return prev, false, err
	}
	if err != nil {
		return channel.Conflict{}, false, err
	}
	return fromConflictDoc(d), true, nil
}

func (s *Conflicts) byRevision(ctx context.Context, c channel.Conflict) (channel.Conflict, bool, error) {
	var d conflictDoc
	err := s.coll.FindOne(ctx, bson.D{{Key: "account_id", Value: c.Account}, {Key: "connection_id", Value: c.ConnectionID},
		{Key: "revision_id", Value: c.RevisionID}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return channel.Conflict{}, false, nil
	}
	if err != nil {
		return channel.Conflict{}, false, err
	}
	return fromConflictDoc(d), true, nil
}

// List returns an account's conflicts (openOnly: the unresolved ones): the open ones first,
// newest first, then the resolved ones, the latest resolved first.
func (s *Conflicts) List(ctx context.Context, account string, openOnly bool) ([]channel.Conflict, error) {
	filter := bson.D{{Key: "account_id", Value: account}}
	if openOnly {
		filter = append(filter, bson.E{Key: "resolved_at", Value: nil})
	}
	cur, err := s.coll.Find(ctx, filter)
	if err != nil {
		return nil, err
	}
	var docs []conflictDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]channel.Conflict, 0, len(docs))
	for _, d := range docs {
		out = append(out, fromConflictDoc(d))
	}
	slices.SortFunc(out, func(a, b channel.Conflict) int {
		switch {
		case (a.ResolvedAt == nil) != (b.ResolvedAt == nil):
			if a.ResolvedAt == nil {
				return -1
			}
			return 1
		case a.ResolvedAt != nil && !a.ResolvedAt.Equal(*b.ResolvedAt):
			return b.ResolvedAt.Compare(*a.ResolvedAt)
		}
		return int(b.ID - a.ID)
	})
	return out, nil
}

// Get returns an account's conflict.
func (s *Conflicts) Get(ctx context.Context, account string, id int64) (channel.Conflict, error) {
	var d conflictDoc
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: connKey(account, id)}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return channel.Conflict{}, channel.ErrNotFound
	}
	if err != nil {
		return channel.Conflict{}, err
	}
	return fromConflictDoc(d), nil
}

// Resolve marks a conflict resolved at at with note; resolving it again keeps the first
// time and takes the new note.
func (s *Conflicts) Resolve(ctx context.Context, account string, id int64, note string, at time.Time) (channel.Conflict, error) {
	var out channel.Conflict
	key := connKey(account, id)
	err := mongostore.WithLease(ctx, s.coll, key, func() error {
		c, err := s.Get(ctx, account, id)
		if err != nil {
			return err
		}
		if c.ResolvedAt == nil {
			t := at.UTC()
			c.ResolvedAt = &t
		}
		c.Note = note
		in, err := s.begin(ctx, account, id)
		if err != nil {
			return err
		}
		_, err = s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: key}}, bson.D{{Key: "$set", Value: bson.D{
			{Key: "resolved_at", Value: c.ResolvedAt}, {Key: "note", Value: note}}}})
		s.done(in)
		if err != nil {
			return err
		}
		out = c
		return nil
	})
	return out, err
}
