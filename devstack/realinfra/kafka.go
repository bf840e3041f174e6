package realinfra

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

//go:embed kafka/pom.xml
var kafkaPOM []byte

// KafkaVersion is the Apache Kafka release kafka/pom.xml pins.
var KafkaVersion = func() string {
	m := regexp.MustCompile(`<kafka\.version>([^<]+)</kafka\.version>`).FindSubmatch(kafkaPOM)
	if m == nil {
		panic("realinfra: kafka/pom.xml has no kafka.version")
	}
	return string(m[1])
}()

// kafkaBroker is a single-node Kafka in KRaft mode (broker and controller in one JVM).
type kafkaBroker struct {
	dir            string
	java           string
	classpath      string
	heap           string
	port, ctrlPort int
	proc           *process
}

// Addr is the broker's bootstrap address.
func (k *kafkaBroker) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(k.port)) }

// prepareKafka finds Java, fetches the broker with Maven (once: the class path is cached),
// writes the broker's configuration on two free loopback ports and formats its storage.
func prepareKafka(ctx context.Context, dir, heap string, partitions int, log *slog.Logger) (*kafkaBroker, error) {
	java, err := javaBin()
	if err != nil {
		return nil, err
	}
	cp, err := kafkaClasspath(ctx, log)
	if err != nil {
		return nil, err
	}
	k := &kafkaBroker{dir: dir, java: java, classpath: cp, heap: heap}
	if k.port, err = freePort(); err != nil {
		return nil, err
	}
	if k.ctrlPort, err = freePort(); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	props := fmt.Sprintf(`# Written by devstack/realinfra: one node that is broker and controller (KRaft).
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:%[2]d
listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=%[3]s
# As in production (the chart's hook Job creates the topics): nothing is created by a write.
auto.create.topics.enable=false
num.partitions=%[4]d
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
# A small machine: few threads, a small cleaner buffer.
num.network.threads=2
num.io.threads=4
log.cleaner.dedupe.buffer.size=16777216
# Compaction is tested (libs/events): look for dirty logs every second, not every 15.
log.cleaner.backoff.ms=1000
`, k.port, k.ctrlPort, data, partitions)
	if err := os.WriteFile(k.propsPath(), []byte(props), 0o644); err != nil {
		return nil, err
	}
	log4j := fmt.Sprintf(`log4j.rootLogger=INFO, file
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=%s
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%%d] %%p %%m (%%c)%%n
`, filepath.Join(dir, "server.log"))
	if err := os.WriteFile(k.log4jPath(), []byte(log4j), 0o644); err != nil {
		return nil, err
	}
	if !isFile(filepath.Join(data, "meta.properties")) {
		var id [16]byte
		_, _ = rand.Read(id[:])
		if err := k.formatStorage(ctx, base64.RawURLEncoding.EncodeToString(id[:])); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// formatStorage formats the broker's log directory for the cluster id (base64url of 16
// bytes). The id is passed as `--cluster-id=<id>`: one random id in 64 starts with '-',
// which the tool's argument parser takes for an option when the id is an argument of its
// own.
func (k *kafkaBroker) formatStorage(ctx context.Context, id string) error {
	cmd := exec.CommandContext(ctx, k.java, append(k.jvmArgs("128m"), "kafka.tools.StorageTool", "format",
		"--cluster-id="+id, "--config", k.propsPath(), "--ignore-formatted")...)
	if _, err := run(cmd, nil); err != nil {
		return fmt.Errorf("format Kafka storage: %w", err)
	}
	return nil
}

func (k *kafkaBroker) propsPath() string { return filepath.Join(k.dir, "server.properties") }
func (k *kafkaBroker) log4jPath() string { return filepath.Join(k.dir, "log4j.properties") }

// jvmArgs keep the JVM small and quick to start: serial GC, the client compiler only.
func (k *kafkaBroker) jvmArgs(heap string) []string {
	return []string{"-Xms64m", "-Xmx" + heap, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:+ExitOnOutOfMemoryError",
		"-Djava.awt.headless=true", "-Dlog4j.configuration=file:" + k.log4jPath(), "-cp", k.classpath}
}

// start runs the broker and returns once it answers metadata requests.
func (k *kafkaBroker) start(ctx context.Context) error {
	if k.proc != nil && !k.proc.exited() {
		return nil
	}
	cmd := exec.Command(k.java, append(k.jvmArgs(k.heap), "kafka.Kafka", k.propsPath())...)
	cmd.Dir = k.dir
	proc, err := startProcess("kafka", cmd, filepath.Join(k.dir, "kafka.out"), nil)
	if err != nil {
		return err
	}
	k.proc = proc
	return k.waitReady(ctx, nil)
}

// waitReady polls until the broker answers and every partition of topics has a leader.
func (k *kafkaBroker) waitReady(ctx context.Context, topics []string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := k.ready(ctx, topics)
		if err == nil {
			return nil
		}
		if k.proc.exited() {
			return fmt.Errorf("%w (see %s)", k.proc.failure(), filepath.Join(k.dir, "server.log"))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("kafka not ready within 2 minutes (see %s): %w", filepath.Join(k.dir, "server.log"), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ready asks the broker, on a connection of its own (kafka-go's Transport would answer
// from its metadata cache).
func (k *kafkaBroker) ready(ctx context.Context, topics []string) error {
	conn, err := (&kafka.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, "tcp", k.Addr())
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	brokers, err := conn.Brokers()
	if err != nil {
		return err
	}
	if len(brokers) == 0 {
		return errors.New("no broker registered yet")
	}
	if len(topics) == 0 {
		return nil
	}
	parts, err := conn.ReadPartitions(topics...)
	if err != nil {
		return err
	}
	found := map[string]bool{}
	for _, p := range parts {
		if p.Error != nil || p.Leader.Host == "" {
			return fmt.Errorf("topic %s partition %d has no leader yet (%v)", p.Topic, p.ID, p.Error)
		}
		found[p.Topic] = true
	}
	for _, t := range topics {
		if !found[t] {
			return fmt.Errorf("topic %s not there yet", t)
		}
	}
	return nil
}

// stop shuts the broker down cleanly (its data stays for start).
func (k *kafkaBroker) stop() error {
	if k.proc == nil {
		return nil
	}
	return k.proc.stop(os.Interrupt, 60*time.Second)
}

// createTopics creates topics (compacted) unless they exist, and waits for their leaders.
func (k *kafkaBroker) createTopics(ctx context.Context, partitions int, topics ...string) error {
	transport := &kafka.Transport{}
	defer transport.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(k.Addr()), Timeout: 10 * time.Second, Transport: transport}
	req := &kafka.CreateTopicsRequest{}
	for _, t := range topics {
		req.Topics = append(req.Topics, kafka.TopicConfig{Topic: t, NumPartitions: partitions, ReplicationFactor: 1,
			ConfigEntries: []kafka.ConfigEntry{{ConfigName: "cleanup.policy", ConfigValue: "compact"}}})
	}
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := client.CreateTopics(ctx, req)
		if err == nil {
			for t, terr := range resp.Errors {
				if terr != nil && !errors.Is(terr, kafka.TopicAlreadyExists) {
					err = errors.Join(err, fmt.Errorf("create topic %s: %w", t, terr))
				}
			}
		}
		if err == nil {
			return k.waitReady(ctx, topics)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// javaBin is $JAVA_HOME/bin/java or java on the PATH.
func javaBin() (string, error) {
	if h := os.Getenv("JAVA_HOME"); h != "" && isFile(filepath.Join(h, "bin", "java")) {
		return filepath.Join(h, "bin", "java"), nil
	}
	if p, err := exec.LookPath("java"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("java %w: Kafka %s needs Java 11 or later (Debian: apt-get install openjdk-17-jre-headless)", errNotFound, KafkaVersion)
}

// kafkaClasspath returns the broker's class path. The first time (per version of
// kafka/pom.xml) Maven fetches the jars from Maven Central into its local repository and
// writes the class path; later starts read it back, as long as every jar is still there.
func kafkaClasspath(ctx context.Context, log *slog.Logger) (string, error) {
	sum := sha256.Sum256(kafkaPOM)
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "vros", "kafka-"+KafkaVersion+"-"+hex.EncodeToString(sum[:6]))
	cpFile := filepath.Join(dir, "classpath.txt")
	if b, err := os.ReadFile(cpFile); err == nil && allFiles(string(b)) {
		return strings.TrimSpace(string(b)), nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("mvn %w: it fetches Kafka %s from Maven Central (Debian: apt-get install maven)", errNotFound, KafkaVersion)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "pom.xml"), kafkaPOM, 0o644); err != nil {
		return "", err
	}
	log.Info("fetching Apache Kafka with Maven (once; cached in ~/.m2)", "version", KafkaVersion)
	start := time.Now()
	tmp := cpFile + ".tmp"
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "-f", filepath.Join(dir, "pom.xml"), "dependency:build-classpath",
		"-Dmdep.outputFile="+tmp, "-Dmdep.includeScope=runtime")
	cmd.Dir = dir
	if _, err := run(cmd, nil); err != nil {
		return "", fmt.Errorf("fetch Kafka with Maven: %w", err)
	}
	b, err := os.ReadFile(tmp)
	if err != nil {
		return "", fmt.Errorf("read the class path Maven wrote: %w", err)
	}
	if !allFiles(string(b)) {
		return "", fmt.Errorf("maven wrote no usable class path to %s", tmp)
	}
	if err := os.Rename(tmp, cpFile); err != nil {
		return "", err
	}
	log.Info("fetched Apache Kafka", "version", KafkaVersion, "took", time.Since(start).Round(time.Second).String())
	return strings.TrimSpace(string(b)), nil
}

func allFiles(classpath string) bool {
	parts := filepath.SplitList(strings.TrimSpace(classpath))
	if len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		if !isFile(p) {
			return false
		}
	}
	return true
}

// freePort returns a loopback port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
