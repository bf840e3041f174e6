package bench

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	catalog "github.com/vros/vros/catalog-svc/service"
	"github.com/vros/vros/devstack/proc"
	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/testkit/servers"
)

// BenchmarkScale is the scale run (`make bench-scale`, docs/benchmarks.md "At scale"): vros
// as a deployment runs it — property-svc, booking-svc, catalog-svc and edge each its own
// process, built from the workspace, on the embedded servers (FerretDB on SQLite and kfake)
// in a process of their own (vros-infra embedded) — with 100 accounts whose properties grow by the steps of
// VROS_BENCH_SCALE (e.g. 100,1000,10000 properties in all). At each step:
//
//   - each account's first property is created through interface A (content, rates with two
//     seasons a year, a photo), the others are published on vros.property.v1 as copies of it
//     (grow); each property gets scaleBookings bookings over two years (a year back, a year
//     ahead; one in ten cancelled), published on vros.booking.v1 as booking-svc publishes
//     them (the topics are how every view learns of properties and bookings; writing 100 000
//     bookings through interface B would take this machine a quarter of an hour, and the
//     write path is measured on its own below);
//   - once every consumer group has read both topics to the end, each service's resident
//     memory (/proc/<pid>/status: what a container's limit is compared with);
//   - getcalendar (365 days), getinfo (7 nights) and the website search through edge, each
//     request on a property (or account) drawn at random, 16 clients for scaleFor;
//   - one-night bookings through interface B at random properties: the per-booking write cost
//     with the store holding the whole scale.
//
// After the last step, catalog-svc is restarted as after a crash (it reads its store whole),
// started as a new replica (its store, then the topics from their start under a new consumer
// group), and rebuilt from the topics alone (its database dropped); booking-svc is started as
// a new replica: the time until each answers /readyz and until it has read the topics to the
// end. Skipped unless VROS_BENCH_SCALE is set; run it alone (-benchtime 1x:
// every measure here runs for a fixed time, not b.N times).
func BenchmarkScale(b *testing.B) {
	var steps []int
	for _, f := range strings.Split(os.Getenv("VROS_BENCH_SCALE"), ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < scaleAccounts || (len(steps) > 0 && n <= steps[len(steps)-1]) {
			b.Fatalf("VROS_BENCH_SCALE: %q: growing numbers of properties, each at least %d (one per account)", f, scaleAccounts)
		}
		steps = append(steps, n)
	}
	if len(steps) == 0 {
		b.Skip("VROS_BENCH_SCALE is not set (make bench-scale sets it)")
	}
	sc := startScale(b)
	defer sc.close()
	for _, n := range steps {
		step := fmt.Sprintf("properties=%d", n)
		b.Run(step+"/setup", func(b *testing.B) { sc.grow(b, n) })
		b.Run(step+"/getcalendar", func(b *testing.B) { sc.drive(b, sc.calendar) })
		b.Run(step+"/getinfo", func(b *testing.B) {
			// booking-svc prices from the properties it read once from its store and keeps:
			// measured warm, each property asked for once before.
			sc.warm(b)
			sc.drive(b, sc.quote)
		})
		b.Run(step+"/search", func(b *testing.B) { sc.drive(b, sc.search) })
		b.Run(step+"/create", func(b *testing.B) { sc.drive(b, sc.create) })
		sc.await(b) // the bookings just made are in the views too
		b.Run(step+"/memory", func(b *testing.B) { sc.reportMemory(b) })
	}
	last := fmt.Sprintf("properties=%d", steps[len(steps)-1])
	b.Run(last+"/rebuild", func(b *testing.B) { sc.rebuild(b) })
}

const (
	scaleAccounts = 100
	scaleBookings = 10 // per property, over two years
	scaleClients  = 16
	scaleFor      = 5 * time.Second
	scaleAdmin    = "scale-admin-token"
)

// scale is the running system of BenchmarkScale and what it has set up.
type scale struct {
	tmp   string
	infra struct { // where the embedded servers listen
		MongoURI     string
		KafkaBrokers []string
	}
	edgeURL  string
	services map[string]*proc.Service
	groups   map[string]string // consumer group of booking-svc and catalog-svc

	accounts []*scaleAccount
	booked   atomic.Int64 // bookings published
	copied   atomic.Int64 // property copies published
	// templates are the snapshots of each account's first property, by account.
	templates map[string]contract.Property
	created   atomic.Int64 // BenchmarkScale's bookings through interface B
	photo     string       // base64 PNG of every property's photo
}

type scaleAccount struct {
	credentials
	properties []int64 // the first created through interface A, the others copies of it
	booked     int     // properties[:booked] have their bookings
}

func startScale(b *testing.B) *scale {
	ctx := context.Background()
	tmp := b.TempDir()
	sc := &scale{tmp: tmp, services: map[string]*proc.Service{}, templates: map[string]contract.Property{},
		groups: map[string]string{"booking-svc": "booking-scale", "catalog-svc": "catalog-scale"}}
	if err := sc.startInfra(ctx); err != nil {
		sc.close()
		b.Fatal(err)
	}
	in := sc.infra
	addr := map[string]string{}
	for _, name := range []string{"property-svc", "booking-svc", "catalog-svc", "edge"} {
		bin, err := proc.Build(tmp, name, "../../"+name+"/cmd/"+name)
		if err != nil {
			sc.close()
			b.Fatal(err)
		}
		api, err1 := proc.FreeAddr()
		internal, err2 := proc.FreeAddr()
		if err1 != nil || err2 != nil {
			sc.close()
			b.Fatal(err1, err2)
		}
		addr[name] = "http://" + api
		env := append(proc.WithoutVROS(os.Environ()),
			"VROS_MONGO_URI="+in.MongoURI, "VROS_KAFKA_BROKERS="+strings.Join(in.KafkaBrokers, ","),
			"VROS_ENCRYPTION_KEY="+seal.NewKey(), "VROS_LOG_LEVEL=warn",
			"VROS_INTERNAL_ADDR="+internal)
		env = append(env, stack.KeyEnv(keys, name)...)
		switch name {
		case "property-svc":
			env = append(env, "VROS_PROPERTY_ADDR="+api)
		case "booking-svc":
			env = append(env, "VROS_BOOKING_ADDR="+api, "VROS_BOOKING_PASSWORD_COST=4",
				"VROS_BOOKING_CONSUMER_GROUP="+sc.groups[name], "VROS_BOOKING_PROPERTY_URL="+addr["property-svc"])
		case "catalog-svc":
			env = append(env, "VROS_CATALOG_ADDR="+api, "VROS_CATALOG_CONSUMER_GROUP="+sc.groups[name])
		case "edge":
			// No per-account limits: 16 clients of one account are the load, not an abuse.
			env = append(env, "VROS_EDGE_ADDR="+api, "VROS_EDGE_PUBLIC_URL="+addr[name], "VROS_EDGE_ADMIN_TOKEN="+scaleAdmin,
				"VROS_EDGE_PROPERTY_URL="+addr["property-svc"], "VROS_EDGE_BOOKING_URL="+addr["booking-svc"],
				"VROS_EDGE_CATALOG_URL="+addr["catalog-svc"], "VROS_EDGE_RATE_LIMIT_RPS=0", "VROS_EDGE_ACCOUNT_CONCURRENCY=0",
				"VROS_EDGE_AUTH_FAILURE_RPS=0")
		}
		p := &proc.Service{Name: name, Bin: bin, LogPath: filepath.Join(tmp, name+".log"), Env: env, InternalURL: "http://" + internal}
		sc.services[name] = p
		if err := p.Start(ctx); err != nil {
			sc.close()
			b.Fatalf("%v\n%s", err, p.LogTail())
		}
	}
	sc.edgeURL = addr["edge"]
	var img bytes.Buffer
	rgba := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for i := range rgba.Pix {
		rgba.Pix[i] = uint8(i * 7)
	}
	rgba.Set(0, 0, color.RGBA{R: 200, A: 255})
	_ = png.Encode(&img, rgba)
	sc.photo = base64.StdEncoding.EncodeToString(img.Bytes())
	for range scaleAccounts {
		creds, err := openAccount(sc.edgeURL, scaleAdmin)
		if err != nil {
			sc.close()
			b.Fatal(err)
		}
		sc.accounts = append(sc.accounts, &scaleAccount{credentials: creds})
	}
	return sc
}

// startInfra runs the embedded servers in a process of their own (vros-infra embedded), so
// that their memory and processor time are not this process's, which generates the load.
func (sc *scale) startInfra(ctx context.Context) error {
	bin, err := proc.Build(sc.tmp, "vros-infra", "../../devstack/cmd/vros-infra")
	if err != nil {
		return err
	}
	log := filepath.Join(sc.tmp, "infra.log")
	p := &proc.Service{Name: "infra", Bin: bin, Args: []string{"embedded", "-state", filepath.Join(sc.tmp, "data")},
		LogPath: log, Env: proc.WithoutVROS(os.Environ())}
	p.Ready = func() bool {
		b, _ := os.ReadFile(log)
		for _, line := range strings.Split(string(b), "\n") {
			if s, ok := servers.ParseReadyLine(line); ok {
				sc.infra.MongoURI, sc.infra.KafkaBrokers = s.MongoURI, s.KafkaBrokers
			}
		}
		return sc.infra.MongoURI != "" && len(sc.infra.KafkaBrokers) > 0
	}
	sc.services["infra"] = p
	return p.Start(ctx)
}

func (sc *scale) close() {
	for _, p := range sc.services {
		if p.Name != "infra" {
			p.Kill()
		}
	}
	if p := sc.services["infra"]; p != nil {
		p.Stop()
	}
}

// logs are the tails of the services' logs, for a failure's message.
func (sc *scale) logs() string {
	var s strings.Builder
	for name, p := range sc.services {
		fmt.Fprintf(&s, "---- %s\n%s\n", name, p.LogTail())
	}
	return s.String()
}

// grow brings the properties to n in all, spread evenly over the accounts: the first of each
// account is created through interface A (content, rates with two seasons a year, a photo),
// the others are published on vros.property.v1 as copies of it (new ids and codes, names,
// cities, guests and prices of their own), as property-svc publishes a property — creating
// 10 000 through interface A would take this machine half an hour, most of it rendering the
// same photo's seven renditions. Then it publishes the new properties' bookings and waits
// until every view has read them. It reports how long each part took.
func (sc *scale) grow(b *testing.B, n int) {
	start := time.Now()
	var first []*scaleAccount // those without a property yet
	for a, acc := range sc.accounts {
		if len(acc.properties) == 0 && sc.target(a, n) > 0 {
			first = append(first, acc)
		}
	}
	err := inParallel(len(first), scaleClients, func(i int) error {
		pid, err := sc.createProperty(first[i], 0)
		if err == nil {
			first[i].properties = append(first[i].properties, pid) // each account by one worker
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	api := time.Since(start)
	copies, err := sc.copyProperties(n)
	if err != nil {
		b.Fatal(err)
	}
	var made []scaleProperty
	for _, acc := range sc.accounts {
		for _, pid := range acc.properties[acc.booked:] {
			made = append(made, scaleProperty{acc: acc, id: pid})
		}
		acc.booked = len(acc.properties)
	}
	if err := sc.publishBookings(made); err != nil {
		b.Fatal(err)
	}
	published := time.Since(start)
	cpu := sc.cpu(b)
	sc.await(b)
	sc.reportCPU(b, cpu, time.Since(start)-published) // while the views caught up
	b.ReportMetric(api.Seconds(), "interface-a-s")
	b.ReportMetric(float64(copies), "copies")
	b.ReportMetric((published - api).Seconds(), "publish-s")
	b.ReportMetric((time.Since(start) - published).Seconds(), "views-caught-up-s")
}

// target is how many properties account a has when there are n in all.
func (sc *scale) target(a, n int) int { return n/scaleAccounts + btoi(a < n%scaleAccounts) }

// copyProperties publishes the copies of each account's first property that bring the
// properties to n in all, and returns how many it published.
func (sc *scale) copyProperties(n int) (int, error) {
	if err := sc.readTemplates(); err != nil {
		return 0, err
	}
	w := &kafka.Writer{Addr: kafka.TCP(sc.infra.KafkaBrokers...), Topic: events.TopicProperty, Balancer: &kafka.Murmur2Balancer{},
		BatchSize: 1000, BatchTimeout: 10 * time.Millisecond, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	var batch []kafka.Message
	now := time.Now().UTC()
	for a, acc := range sc.accounts {
		for i := len(acc.properties); i < sc.target(a, n); i++ {
			p := sc.templates[acc.AccountID] // a copy of the struct; its maps and slices are only read
			p.PropertyID = 1_500_000_000 + sc.copied.Add(1)
			p.InternalCode = fmt.Sprintf("SC%05d", i)
			p.Version, p.CreatedAt, p.UpdatedAt, p.ICalTokenSHA256 = 1, now, now, ""
			p.Content.Name = fmt.Sprintf("Holiday home number %d", i)
			p.Content.City = scaleCities[i%len(scaleCities)]
			p.Content.MaxGuest, p.Content.Bedrooms = 2+i%7, 1+i%5
			rates := *p.Rates
			rates.Rate.Daily = strconv.Itoa(80 + i%100)
			p.Rates = &rates
			key := events.Key(acc.AccountID, strconv.FormatInt(p.PropertyID, 10))
			v, err := events.Encode("/vros/property-svc", contract.PropertyCreated, key, now, p)
			if err != nil {
				return 0, err
			}
			batch = append(batch, kafka.Message{Key: []byte(key), Value: v,
				Headers: []kafka.Header{{Key: "content-type", Value: []byte("application/cloudevents+json")}}})
			acc.properties = append(acc.properties, p.PropertyID)
		}
	}
	copies := len(batch)
	for len(batch) > 0 {
		k := min(len(batch), 1000)
		if err := w.WriteMessages(context.Background(), batch[:k]...); err != nil {
			return 0, err
		}
		batch = batch[k:]
	}
	return copies, nil
}

// readTemplates reads, from vros.property.v1, the snapshot of each account's first property
// once it carries its rates and its photo (property-svc publishes after answering).
func (sc *scale) readTemplates() error {
	want := map[string]*scaleAccount{}
	for _, acc := range sc.accounts {
		if _, ok := sc.templates[acc.AccountID]; !ok && len(acc.properties) > 0 {
			want[events.Key(acc.AccountID, strconv.FormatInt(acc.properties[0], 10))] = acc
		}
	}
	deadline := time.Now().Add(time.Minute)
	for len(want) > 0 {
		latest, err := sc.latest(events.TopicProperty)
		if err != nil {
			return err
		}
		for key, acc := range want {
			var p contract.Property
			if v, ok := latest[key]; ok {
				if _, err := events.Decode(v, &p); err != nil {
					return fmt.Errorf("snapshot %s: %w", key, err)
				}
			}
			if p.Rates != nil && len(p.Photos) > 0 {
				sc.templates[acc.AccountID] = p
				delete(want, key)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d accounts' first property never showed on %s with rates and a photo", len(want), events.TopicProperty)
		}
		if len(want) > 0 {
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// latest reads topic whole and returns the last value of each key.
func (sc *scale) latest(topic string) (map[string][]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := &kafka.Client{Addr: kafka.TCP(sc.infra.KafkaBrokers...), Timeout: 10 * time.Second}
	ends, err := sc.offsets(ctx, cl, []string{topic})
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, p := range ends.Topics[topic] {
		if p.LastOffset == 0 {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: sc.infra.KafkaBrokers, Topic: topic, Partition: p.Partition, MaxBytes: 10 << 20})
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				_ = r.Close()
				return nil, err
			}
			out[string(m.Key)] = m.Value
			if m.Offset >= p.LastOffset-1 {
				break
			}
		}
		_ = r.Close()
	}
	return out, nil
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

type scaleProperty struct {
	acc *scaleAccount
	id  int64
}

var scaleCities = []string{"Miami Beach", "Lucca", "Nice", "Porto", "Split", "Chania", "Tavira", "Cassis"}

// createProperty creates property i of acc: content, rates with a summer and a winter season
// in each of the two years, and one photo.
func (sc *scale) createProperty(acc *scaleAccount, i int) (int64, error) {
	h := acc.aHeaders()
	code := fmt.Sprintf("SC%05d", i)
	p := fmt.Sprintf(`{"action":"create","property":{"internal_code":%q,"name":"Holiday home number %d","type":"Villa",`+
		`"maxguest":%d,"bedrooms":%d,"bathrooms":1,"kitchens":1,"floor":"Ground","space":{"value":%d,"unit":"meters"},`+
		`"address":"%d Harbour Road","city":%q,"state":"","postcode":"1000","country":"PT","latitude":%.4f,"longitude":%.4f}}`,
		code, i, 2+i%7, 1+i%5, 60+i%90, i, scaleCities[i%len(scaleCities)], 37+float64(i%100)/100, -8+float64(i%100)/100)
	st, body := send("POST", sc.edgeURL+"/api/property", h, []byte(p))
	var out struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	if st != 200 || json.Unmarshal(body, &out) != nil {
		return 0, fmt.Errorf("property %s: %d %s", code, st, body)
	}
	pid, err := strconv.ParseInt(out.Data.PropertyID, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("property %s: id %q", code, out.Data.PropertyID)
	}
	year := time.Now().UTC().Year()
	var seasons []string
	for y := year; y <= year+1; y++ {
		seasons = append(seasons,
			fmt.Sprintf(`{"name":"Summer %d","start_date":"%d-06-15","end_date":"%d-09-15","daily_price":%d,"minimum_stay":2}`, y, y, y, 150+i%100),
			fmt.Sprintf(`{"name":"Winter %d","start_date":"%d-12-20","end_date":"%d-01-05","daily_price":%d}`, y, y, y+1, 120+i%100))
	}
	rate := fmt.Sprintf(`{"internal_code":%q,"rate":{"daily_price":%d,"weekend_price":%d,"minimum_stay":1},`+
		`"los":[{"days":7,"discount":10}],"setting":{"standard_occupants":2,"accept_booking_upto":0,"apply_weekend_price":true,`+
		`"advanced_notice_booking_from":"0"},"season":[%s]}`, code, 80+i%100, 95+i%100, strings.Join(seasons, ","))
	if st, body := send("POST", sc.edgeURL+"/api/property-rate", h, []byte(rate)); st != 200 {
		return 0, fmt.Errorf("rates %s: %d %s", code, st, body)
	}
	photo := fmt.Sprintf(`{"action":"create","photo":{"internal_code":%q,"image":%q}}`, code, sc.photo)
	if st, body := send("POST", sc.edgeURL+"/api/property-photo", h, []byte(photo)); st != 200 {
		return 0, fmt.Errorf("photo %s: %d %s", code, st, body)
	}
	return pid, nil
}

// publishBookings publishes scaleBookings bookings of each property on vros.booking.v1, as
// booking-svc's relay publishes them (a full snapshot keyed by booking, CloudEvents JSON,
// murmur2 partitioning): stays of two to seven nights spread over a year back and a year
// ahead, one in ten cancelled. Their ids are far above what booking-svc allocates.
func (sc *scale) publishBookings(props []scaleProperty) error {
	w := &kafka.Writer{Addr: kafka.TCP(sc.infra.KafkaBrokers...), Topic: events.TopicBooking, Balancer: &kafka.Murmur2Balancer{},
		BatchSize: 1000, BatchTimeout: 10 * time.Millisecond, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	var batch []kafka.Message
	for _, p := range props {
		for j := range scaleBookings {
			id := 1_000_000_000 + sc.booked.Add(1)
			in := today.AddDate(0, 0, -365+j*73+int(p.id%40))
			stay := 2 + int(p.id+int64(j))%6
			ev := contract.Booking{AccountID: p.acc.AccountID, BookingID: id, PropertyID: p.id, Status: "reserved", Version: 2,
				Checkin: in.Format(time.DateOnly), Checkout: in.AddDate(0, 0, stay).Format(time.DateOnly), Nights: []string{},
				Adults: 2, Currency: "EUR", TotalRent: strconv.Itoa(100 * stay), GrandTotal: strconv.Itoa(110 * stay),
				CreatedAt: in.AddDate(0, 0, -30)}
			typ := contract.BookingReserved
			if id%10 == 0 {
				at := in.AddDate(0, 0, -10)
				ev.Status, ev.CancelledAt, ev.Version, typ = "cancelled", &at, 3, contract.BookingCancelled
			} else {
				for d := range stay {
					ev.Nights = append(ev.Nights, in.AddDate(0, 0, d).Format(time.DateOnly))
				}
			}
			key := fmt.Sprintf("%s:booking:%d", p.acc.AccountID, id)
			v, err := events.Encode("/vros/booking-svc", typ, key, ev.CreatedAt, ev)
			if err != nil {
				return err
			}
			batch = append(batch, kafka.Message{Key: []byte(key), Value: v,
				Headers: []kafka.Header{{Key: "content-type", Value: []byte("application/cloudevents+json")}}})
			if len(batch) == 1000 {
				if err := w.WriteMessages(context.Background(), batch...); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
	}
	if len(batch) > 0 {
		return w.WriteMessages(context.Background(), batch...)
	}
	return nil
}

// await waits until booking-svc's and catalog-svc's consumer groups have committed the end
// of every partition they read: every write so far is in their views.
func (sc *scale) await(b *testing.B) {
	for _, name := range []string{"booking-svc", "catalog-svc"} {
		if err := sc.readToEnd(sc.groups[name], name, 15*time.Minute); err != nil {
			b.Fatalf("%v\n%s", err, sc.logs())
		}
	}
}

// readToEnd waits until group has committed the end offset of every partition of the
// topics service reads.
func (sc *scale) readToEnd(group, service string, within time.Duration) error {
	topics := []string{events.TopicProperty}
	if service == "catalog-svc" {
		topics = append(topics, events.TopicBooking)
	}
	ctx := context.Background()
	cl := &kafka.Client{Addr: kafka.TCP(sc.infra.KafkaBrokers...), Timeout: 10 * time.Second}
	deadline := time.Now().Add(within)
	var behind int64
	for time.Now().Before(deadline) {
		var err error
		if behind, err = sc.behind(ctx, cl, group, topics); err == nil && behind == 0 {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s (group %s) still %d messages behind after %v", service, group, behind, within)
}

// behind is how many messages group has not yet committed on the topics.
func (sc *scale) behind(ctx context.Context, cl *kafka.Client, group string, topics []string) (int64, error) {
	ends, err := sc.offsets(ctx, cl, topics)
	if err != nil {
		return 0, err
	}
	parts := map[string][]int{}
	for t, ps := range ends.Topics {
		for _, p := range ps {
			parts[t] = append(parts[t], p.Partition)
		}
	}
	done, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: parts})
	if err != nil {
		return 0, err
	}
	if done.Error != nil {
		return 0, done.Error
	}
	committed := map[string]int64{}
	for t, ps := range done.Topics {
		for _, p := range ps {
			committed[t+"/"+strconv.Itoa(p.Partition)] = max(p.CommittedOffset, 0)
		}
	}
	var behind int64
	for t, ps := range ends.Topics {
		for _, p := range ps {
			if p.Error != nil {
				return 0, p.Error
			}
			behind += max(p.LastOffset-committed[t+"/"+strconv.Itoa(p.Partition)], 0)
		}
	}
	return behind, nil
}

// offsets are the end offsets of every partition of the topics.
func (sc *scale) offsets(ctx context.Context, cl *kafka.Client, topics []string) (*kafka.ListOffsetsResponse, error) {
	meta, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: topics})
	if err != nil {
		return nil, err
	}
	ask := map[string][]kafka.OffsetRequest{}
	for _, t := range meta.Topics {
		for _, p := range t.Partitions {
			ask[t.Name] = append(ask[t.Name], kafka.LastOffsetOf(p.ID))
		}
	}
	return cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: ask})
}

// target is one request of a scale measure: the URL and body.
type target func(r *rand.Rand) (string, []byte)

func (sc *scale) randomProperty(r *rand.Rand) (*scaleAccount, int64) {
	for {
		acc := sc.accounts[r.IntN(len(sc.accounts))]
		if len(acc.properties) > 0 {
			return acc, acc.properties[r.IntN(len(acc.properties))]
		}
	}
}

// calendar is getcalendar of a random property, the 365 days from today (what a channel
// polls).
func (sc *scale) calendar(r *rand.Rand) (string, []byte) {
	acc, pid := sc.randomProperty(r)
	return sc.edgeURL + "/vros/external-booking", acc.calendarBody(int(pid), 0, 364)
}

// quote is getinfo of a random property, 7 nights starting within the coming year.
func (sc *scale) quote(r *rand.Rand) (string, []byte) {
	acc, pid := sc.randomProperty(r)
	return sc.edgeURL + "/vros/external-booking", acc.quoteBody(int(pid), r.IntN(300))
}

// search is the website search of a random account: a week in a month, two adults, the
// first page of 10.
func (sc *scale) search(r *rand.Rand) (string, []byte) {
	acc := sc.accounts[r.IntN(len(sc.accounts))]
	return sc.edgeURL + "/vros/api/search-rental/owner_token/" + acc.OwnerToken, []byte(fmt.Sprintf(
		`{"checkin":%q,"checkout":%q,"numberadults":"2","page":"1","limit":"10"}`, day(30), day(37)))
}

// create books one night of a random property beyond the published bookings (day 400 on),
// each booking the night after the previous one's: nobody holds it, so every one succeeds.
func (sc *scale) create(r *rand.Rand) (string, []byte) {
	acc, pid := sc.randomProperty(r)
	n := 400 + int(sc.created.Add(1)) // one night a booking, the next one: never taken
	return sc.edgeURL + "/vros/external-booking", acc.createBody(int(pid), n)
}

// warm asks booking-svc for a quote of every property once (16 clients), and reports how
// long that took: what a replica's first minutes after a start cost.
func (sc *scale) warm(b *testing.B) {
	start := time.Now()
	var all []scaleProperty
	for _, acc := range sc.accounts {
		for _, pid := range acc.properties {
			all = append(all, scaleProperty{acc: acc, id: pid})
		}
	}
	err := inParallel(len(all), scaleClients, func(i int) error {
		code, resp := send("POST", sc.edgeURL+"/vros/external-booking", noHeaders(), all[i].acc.quoteBody(int(all[i].id), 0))
		if !answered(code, resp) {
			return fmt.Errorf("HTTP %d: %.300s", code, resp)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(start).Seconds(), "warm-s")
}

// drive sends next's requests from scaleClients keep-alive clients for scaleFor, each one's
// next request as soon as its previous was answered, and reports requests/s and the latency
// percentiles. Every answer must be a success.
func (sc *scale) drive(b *testing.B, next target) {
	var (
		mu     sync.Mutex
		all    []time.Duration
		failed string
		wg     sync.WaitGroup
	)
	cpu := sc.cpu(b)
	stop := time.Now().Add(scaleFor)
	start := time.Now()
	for c := range scaleClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), uint64(start.UnixNano())))
			var mine []time.Duration
			for time.Now().Before(stop) {
				url, body := next(r)
				t0 := time.Now()
				code, resp := send("POST", url, noHeaders(), body)
				mine = append(mine, time.Since(t0))
				if !answered(code, resp) {
					mu.Lock()
					failed = fmt.Sprintf("HTTP %d: %.300s", code, resp)
					mu.Unlock()
					return
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if failed != "" {
		b.Fatal(failed)
	}
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
	reportPercentiles(b, all)
	sc.reportCPU(b, cpu, elapsed)
}

// reportCPU reports where the machine's time went since before was taken, elapsed ago: each
// process's share of all cores' time ("bench" holds the embedded servers and the load
// generator).
func (sc *scale) reportCPU(b *testing.B, before map[string]time.Duration, elapsed time.Duration) {
	for name, used := range sc.cpu(b) {
		b.ReportMetric(100*(used-before[name]).Seconds()/elapsed.Seconds()/float64(runtime.NumCPU()), name+"-cpu-%")
	}
}

// cpu is the processor time used so far by each service and by this process.
func (sc *scale) cpu(b *testing.B) map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, p := range sc.services {
		t, err := p.CPU()
		if err != nil {
			b.Fatal(err)
		}
		out[strings.TrimSuffix(name, "-svc")] = t
	}
	t, err := proc.CPUOf(os.Getpid())
	if err != nil {
		b.Fatal(err)
	}
	out["bench"] = t
	return out
}

// reportMemory reports the resident memory of each service, now and at its peak, in MiB.
func (sc *scale) reportMemory(b *testing.B) {
	for _, name := range slices.Sorted(maps.Keys(sc.services)) {
		m, err := sc.services[name].Memory()
		if err != nil {
			b.Fatal(err)
		}
		short := strings.TrimSuffix(name, "-svc")
		b.ReportMetric(float64(m.RSS)/(1<<20), short+"-rss-MiB")
		b.ReportMetric(float64(m.Peak)/(1<<20), short+"-peak-MiB")
	}
}

// rebuild restarts catalog-svc from its store, starts it as a new replica would (its store,
// then the topics from their start), rebuilds it from the topics alone, and starts booking-svc
// as a new replica, and reports how long each took to answer /readyz and to read the topics to
// the end.
func (sc *scale) rebuild(b *testing.B) {
	ctx := context.Background()
	cat := sc.services["catalog-svc"]
	timed := func(metric string, p *proc.Service, service, group string) {
		p.Stop()
		start := time.Now()
		if err := p.Start(ctx); err != nil {
			b.Fatalf("%v\n%s", err, p.LogTail())
		}
		ready := time.Since(start)
		if err := sc.readToEnd(group, service, 15*time.Minute); err != nil {
			b.Fatalf("%v\n%s", err, p.LogTail())
		}
		b.ReportMetric(ready.Seconds(), metric+"-ready-s")
		b.ReportMetric(time.Since(start).Seconds(), metric+"-s")
	}
	// As after a crash: the store read whole, the group's offsets kept.
	timed("catalog-restart", cat, "catalog-svc", sc.groups["catalog-svc"])
	// As a new pod (a Deployment's pods get new names, hence new groups): the store read
	// whole, then both topics from their start, every event older than what the store gave.
	sc.groups["catalog-svc"] = "catalog-replica"
	cat.Env = append(cat.Env, "VROS_CATALOG_CONSUMER_GROUP="+sc.groups["catalog-svc"])
	timed("catalog-new-replica", cat, "catalog-svc", sc.groups["catalog-svc"])

	// From the topics alone: no store, a group that never read anything.
	cat.Stop()
	cl, err := mongo.Connect(options.Client().ApplyURI(sc.infra.MongoURI))
	if err != nil {
		b.Fatal(err)
	}
	err = cl.Database(catalog.Database).Drop(ctx)
	_ = cl.Disconnect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	sc.groups["catalog-svc"] = "catalog-rebuild"
	cat.Env = append(cat.Env, "VROS_CATALOG_CONSUMER_GROUP="+sc.groups["catalog-svc"])
	timed("catalog-from-topics", cat, "catalog-svc", sc.groups["catalog-svc"])
	m, err := cat.Memory()
	if err == nil {
		b.ReportMetric(float64(m.RSS)/(1<<20), "catalog-rebuilt-rss-MiB")
	}

	bk := sc.services["booking-svc"]
	sc.groups["booking-svc"] = "booking-rebuild"
	bk.Env = append(bk.Env, "VROS_BOOKING_CONSUMER_GROUP="+sc.groups["booking-svc"])
	timed("booking-new-replica", bk, "booking-svc", sc.groups["booking-svc"])
}
