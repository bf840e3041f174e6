// Package realinfra runs the real servers vros is tested against besides the embedded ones
// (devstack/embedded): PostgreSQL with FerretDB in front of it (its postgresql handler, speaking
// the MongoDB wire protocol) and a single-node Apache Kafka broker in KRaft mode, each on
// loopback ports with its data in one folder. PostgreSQL and Kafka are separate processes;
// FerretDB runs inside the caller.
//
// `make test` uses it through devstack/cmd/vros-infra to run the end-to-end suite and the
// store, outbox and consumer tests a second time (make test-real); `make infra-up` starts
// the same servers for a developer. Tests find them through VROS_MONGO_URI,
// VROS_KAFKA_BROKERS and VROS_INFRA_CONTROL (testkit/servers.FromEnv).
//
// Needs PostgreSQL's server programs, Java 11+ and Maven; Maven fetches the broker pinned in
// kafka/pom.xml from Maven Central the first time.
package realinfra

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"

	"github.com/vros/vros/devstack/embedded"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/testkit/servers"
)

// Options choose where the data lives.
type Options struct {
	// Dir holds PostgreSQL's cluster, Kafka's log and their server logs. Empty means a
	// temporary folder removed by Close.
	Dir string
	// Partitions of each vros topic; default 3.
	Partitions int
	// KafkaHeap is the broker's maximum heap (-Xmx); default 512m.
	KafkaHeap string
	// Log receives progress (Maven's first fetch, start times); nil discards it.
	Log *slog.Logger
}

// Infra is the running servers.
type Infra struct {
	MongoURI     string
	KafkaBrokers []string
	// PostgresURL is the cluster FerretDB stores in (user postgres, no password).
	PostgresURL string
	Dir         string

	opt    Options
	temp   bool
	pg     *postgres
	cancel context.CancelFunc
	fdb    chan struct{} // closed when FerretDB has stopped
	fdbLog *os.File
	// indexer adds the _id indexes FerretDB's filters can use (idindex.go); indexed is
	// closed when it has stopped.
	indexer *idIndexer
	indexed chan struct{}

	kmu   sync.Mutex
	kafka *kafkaBroker

	control *servers.Control
}

// Start starts PostgreSQL, FerretDB and Kafka, and creates the vros topics compacted, as
// the chart's topic Job does. Close stops them.
func Start(ctx context.Context, opt Options) (in *Infra, err error) {
	if opt.Partitions == 0 {
		opt.Partitions = 3
	}
	if opt.KafkaHeap == "" {
		opt.KafkaHeap = "512m"
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	in = &Infra{opt: opt, Dir: opt.Dir}
	if in.Dir == "" {
		if in.Dir, err = os.MkdirTemp("", "vros-realinfra-*"); err != nil {
			return nil, err
		}
		in.temp = true
	} else if in.Dir, err = filepath.Abs(in.Dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(in.Dir, 0o755); err != nil {
		return nil, err
	}
	// PostgreSQL may run as another user (see unprivileged), who must reach its folder.
	if err := os.Chmod(in.Dir, 0o755); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			in.Close()
			in = nil
		}
	}()
	start := time.Now()

	// Maven's first fetch is the slow part: do it while PostgreSQL starts.
	type prepared struct {
		k   *kafkaBroker
		err error
	}
	kch := make(chan prepared, 1)
	go func() {
		k, err := prepareKafka(ctx, filepath.Join(in.Dir, "kafka"), opt.KafkaHeap, opt.Partitions, opt.Log)
		kch <- prepared{k, err}
	}()

	pg, pgErr := startPostgres(ctx, filepath.Join(in.Dir, "postgres"))
	in.pg = pg
	p := <-kch
	if err := errors.Join(pgErr, p.err); err != nil {
		return in, err
	}
	in.PostgresURL = pg.URL

	// FerretDB logs every failed statement as an error, a duplicate _id too, which vros
	// provokes on purpose (a night's ledger document is its lock): to a file, not the terminal.
	fdbLog, err := os.Create(filepath.Join(in.Dir, "ferretdb.log"))
	if err != nil {
		return in, err
	}
	in.fdbLog = fdbLog
	fdb, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: "127.0.0.1:0"},
		Handler:       "postgresql",
		PostgreSQLURL: pg.URL,
		Logger:        slog.New(slog.NewTextHandler(fdbLog, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return in, fmt.Errorf("ferretdb: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	in.cancel, in.fdb = cancel, make(chan struct{})
	go func() { defer close(in.fdb); _ = fdb.Run(runCtx) }()
	in.indexer, in.indexed = &idIndexer{url: pg.Plain, log: opt.Log}, make(chan struct{})
	go func() { defer close(in.indexed); in.indexer.run(runCtx) }()
	// FerretDB's URI carries no replicaSet: it is no replica set, and the driver would not
	// select it if told it were.
	in.MongoURI = fdb.MongoDBURI()
	if err := embedded.WaitTCP(ctx, strings.TrimSuffix(strings.TrimPrefix(in.MongoURI, "mongodb://"), "/"), 30*time.Second); err != nil {
		return in, fmt.Errorf("ferretdb did not start: %w", err)
	}

	in.kafka = p.k
	if err := in.kafka.start(ctx); err != nil {
		return in, err
	}
	if err := in.kafka.createTopics(ctx, opt.Partitions, events.Topics...); err != nil {
		return in, err
	}
	in.KafkaBrokers = []string{in.kafka.Addr()}
	opt.Log.Info("real servers started", "took", time.Since(start).Round(100*time.Millisecond).String(),
		"mongo", in.MongoURI, "kafka", in.KafkaBrokers[0], "dir", in.Dir)
	return in, nil
}

// Describe names the servers and where they listen, for logs.
func (in *Infra) Describe() string {
	return fmt.Sprintf("FerretDB (postgresql handler) on %s at %s; Apache Kafka %s (KRaft) at %s",
		in.pg.Version, in.MongoURI, KafkaVersion, strings.Join(in.KafkaBrokers, ","))
}

// Env is the environment that points the services and the tests at these servers.
func (in *Infra) Env() []string {
	env := []string{"VROS_MONGO_URI=" + in.MongoURI, "VROS_KAFKA_BROKERS=" + strings.Join(in.KafkaBrokers, ",")}
	if in.control != nil {
		env = append(env, EnvControl+"="+in.control.URL)
	}
	return env
}

// StopKafka stops the broker cleanly; its data stays for StartKafka.
func (in *Infra) StopKafka(context.Context) error {
	in.kmu.Lock()
	defer in.kmu.Unlock()
	return in.kafka.stop()
}

// StartKafka starts the broker again on its port with its data, and returns once every
// partition of the vros topics has a leader.
func (in *Infra) StartKafka(ctx context.Context) error {
	in.kmu.Lock()
	defer in.kmu.Unlock()
	if err := in.kafka.start(ctx); err != nil {
		return err
	}
	return in.kafka.waitReady(ctx, events.Topics)
}

// Close stops Kafka, FerretDB and PostgreSQL, and removes a temporary folder.
func (in *Infra) Close() error {
	var errs []error
	if in.control != nil {
		errs = append(errs, in.control.Close())
	}
	in.kmu.Lock()
	if in.kafka != nil {
		errs = append(errs, in.kafka.stop())
	}
	in.kmu.Unlock()
	if in.cancel != nil {
		in.cancel()
		<-in.fdb
		<-in.indexed
	}
	if in.fdbLog != nil {
		_ = in.fdbLog.Close()
	}
	if in.pg != nil {
		errs = append(errs, in.pg.stop())
	}
	if in.temp {
		errs = append(errs, os.RemoveAll(in.Dir))
	}
	return errors.Join(errs...)
}
