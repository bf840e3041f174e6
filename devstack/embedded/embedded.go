// Package embedded runs the infrastructure vros needs inside one process, for `make run`
// and for tests: a MongoDB-wire server (FerretDB on SQLite files) and a Kafka-protocol
// broker (franz-go's kfake). The services talk to them with the real MongoDB driver and the
// real Kafka client, exactly as they talk to real servers.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/vros/vros/libs/events"
)

// Options choose where the data lives and where the servers listen.
type Options struct {
	// Dir holds the SQLite files and the broker's log segments. Empty means a temporary
	// folder removed by Close.
	Dir string
	// MongoAddr is the FerretDB listen address; default 127.0.0.1:0 (any free port).
	MongoAddr string
	// KafkaPort is the broker's port on 127.0.0.1; 0 picks a free one.
	KafkaPort int
	// Partitions of each topic; default 3.
	Partitions int32
	Log        *slog.Logger
}

// Infra is the running embedded infrastructure.
type Infra struct {
	MongoURI     string
	KafkaBrokers []string

	opt     Options
	temp    bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	indexer *idIndexer

	kmu   sync.Mutex
	kafka *kfake.Cluster
}

// Start starts FerretDB and the broker and creates the vros topics (compacted).
func Start(ctx context.Context, opt Options) (*Infra, error) {
	in := &Infra{opt: opt}
	if in.opt.Dir == "" {
		d, err := os.MkdirTemp("", "vros-embedded-*")
		if err != nil {
			return nil, err
		}
		in.opt.Dir, in.temp = d, true
	}
	if in.opt.MongoAddr == "" {
		in.opt.MongoAddr = "127.0.0.1:0"
	}
	if in.opt.Partitions == 0 {
		in.opt.Partitions = 3
	}
	if in.opt.Log == nil {
		in.opt.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	mongoDir := filepath.Join(in.opt.Dir, "mongo")
	if err := os.MkdirAll(mongoDir, 0o700); err != nil {
		return nil, err
	}

	installBusyHandler() // before FerretDB opens a file (busy.go)
	runCtx, cancel := context.WithCancel(context.Background())
	in.cancel = cancel
	fdb, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: in.opt.MongoAddr},
		Handler:   "sqlite",
		SQLiteURL: "file:" + mongoDir + "/?_pragma=synchronous(normal)",
		// FerretDB logs every unsupported command the driver sends (endSessions at each
		// disconnect) as a warning; only its errors matter here.
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})).With("component", "ferretdb"),
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("ferretdb: %w", err)
	}
	in.wg.Add(1)
	go func() { defer in.wg.Done(); _ = fdb.Run(runCtx) }()
	in.MongoURI = fdb.MongoDBURI()
	if err := WaitTCP(ctx, hostOf(in.MongoURI), 10*time.Second); err != nil {
		in.Close()
		return nil, fmt.Errorf("ferretdb did not start: %w", err)
	}

	in.indexer = newIDIndexer(mongoDir, in.opt.Log)
	in.wg.Add(1)
	go func() { defer in.wg.Done(); in.indexer.run(runCtx) }()

	if err := in.StartKafka(); err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

// StartKafka (re)starts the broker on its port with its data. Tests use StopKafka and
// StartKafka to show that events written while Kafka is down are delivered later.
func (in *Infra) StartKafka() error {
	in.kmu.Lock()
	defer in.kmu.Unlock()
	if in.kafka != nil {
		return nil
	}
	c, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.Ports(in.opt.KafkaPort),
		kfake.DefaultNumPartitions(int(in.opt.Partitions)),
		kfake.DataDir(filepath.Join(in.opt.Dir, "kafka")),
	)
	if err != nil {
		return fmt.Errorf("kafka broker: %w", err)
	}
	for _, t := range events.Topics {
		if err := c.CreateTopic(t, in.opt.Partitions, map[string]string{"cleanup.policy": "compact"}); err != nil &&
			!isTopicExists(err) {
			c.Close()
			return fmt.Errorf("create topic %s: %w", t, err)
		}
	}
	in.kafka = c
	in.KafkaBrokers = c.ListenAddrs()
	if in.opt.KafkaPort == 0 {
		_, port, _ := net.SplitHostPort(in.KafkaBrokers[0])
		in.opt.KafkaPort, _ = strconv.Atoi(port)
	}
	return nil
}

// StopKafka stops the broker; its data stays on disk for StartKafka.
func (in *Infra) StopKafka() {
	in.kmu.Lock()
	defer in.kmu.Unlock()
	if in.kafka != nil {
		in.kafka.Close()
		in.kafka = nil
	}
}

// IndexIDs makes every collection's `_id` lookups index searches now, instead of within the
// indexer's next tick.
func (in *Infra) IndexIDs() error { return in.indexer.pass() }

// Close stops everything and removes a temporary data folder.
func (in *Infra) Close() {
	in.StopKafka()
	if in.cancel != nil {
		in.cancel()
	}
	in.wg.Wait()
	if in.temp {
		_ = os.RemoveAll(in.opt.Dir)
	}
}

func isTopicExists(err error) bool { return errors.Is(err, kerr.TopicAlreadyExists) }

func hostOf(uri string) string {
	h, _, _ := strings.Cut(strings.TrimPrefix(uri, "mongodb://"), "/")
	return h
}

// WaitTCP waits until addr accepts TCP connections, for up to timeout: a server started
// in the background is ready to be dialled.
func WaitTCP(ctx context.Context, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}
