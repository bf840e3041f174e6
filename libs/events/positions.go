package events

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/segmentio/kafka-go"
)

// Partition names one partition of a topic.
type Partition struct {
	Topic string
	ID    int
}

// Positions are offsets by partition: for a view, the last message of each partition it has
// applied; for a reader, the last message of each partition it has heard.
type Positions map[Partition]int64

// String encodes p as "topic/partition=offset" items joined by commas, in order: what
// ParsePositions reads back.
func (p Positions) String() string {
	keys := make([]Partition, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Partition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return a.ID - b.ID
	})
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k.Topic)
		b.WriteByte('/')
		b.WriteString(strconv.Itoa(k.ID))
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(p[k], 10))
	}
	return b.String()
}

// ParsePositions reads what Positions.String wrote.
func ParsePositions(s string) (Positions, error) {
	p := Positions{}
	if s == "" {
		return p, nil
	}
	for item := range strings.SplitSeq(s, ",") {
		name, off, ok := strings.Cut(item, "=")
		topic, part, ok2 := strings.Cut(name, "/")
		if !ok || !ok2 || topic == "" {
			return nil, fmt.Errorf("position %q is not topic/partition=offset", item)
		}
		id, err := strconv.Atoi(part)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("position %q: the partition is not a number", item)
		}
		o, err := strconv.ParseInt(off, 10, 64)
		if err != nil || o < -1 {
			return nil, fmt.Errorf("position %q: the offset is not a number", item)
		}
		p[Partition{topic, id}] = o
	}
	return p, nil
}

// Covers reports whether p has reached each of want's offsets.
func (p Positions) Covers(want Positions) bool {
	for k, o := range want {
		if got, ok := p[k]; !ok || got < o {
			return false
		}
	}
	return true
}

// Applied is how far a view's consumer has applied its topics (docs/catalog.md, "Answers
// kept at edge"): for each partition, the offset of the last message whose handler returned
// (applied, or parked as never applicable), so that everything a read finds in the view is at
// least what the positions read before it say. Safe for concurrent use; the zero value is
// ready and knows no partition.
type Applied struct {
	mu  sync.Mutex
	at  Positions
	enc atomic.Pointer[string] // at encoded; nil once at has moved, until String encodes it
}

// Mark records that the message at offset of the partition has been applied: the positions
// only move forward (a message delivered again after a rebalance changes nothing). It does
// not encode them: a catch-up marks thousands of messages that no read asks about.
func (a *Applied) Mark(topic string, partition int, offset int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := Partition{topic, partition}
	if cur, ok := a.at[k]; ok && cur >= offset {
		return
	}
	if a.at == nil {
		a.at = Positions{}
	}
	a.at[k] = offset
	a.enc.Store(nil)
}

// String is the positions encoded (Positions.String), "" while none is known: a load, once
// encoded after the last Mark.
func (a *Applied) String() string {
	if s := a.enc.Load(); s != nil {
		return *s
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.enc.Load(); s != nil {
		return *s
	}
	s := a.at.String()
	a.enc.Store(&s)
	return s
}

// LoadCommitted marks what group has committed on every partition of topics as applied
// (the message before each committed offset; -1 where nothing is committed, since the group
// then starts from the first message): a view whose store already holds what its group
// committed is at least there before it reads a message. It asks the broker once.
func (a *Applied) LoadCommitted(ctx context.Context, brokers []string, group string, topics []string) error {
	c := &kafka.Client{Addr: kafka.TCP(brokers...)}
	parts, err := PartitionsOf(ctx, c, topics)
	if err != nil {
		return err
	}
	committed, err := Committed(ctx, c, group, parts)
	if err != nil {
		return err
	}
	for p, off := range committed {
		a.Mark(p.Topic, p.ID, max(off, 0)-1)
	}
	return nil
}

// Committed answers the offsets group has committed on parts (-1 where it committed none).
func Committed(ctx context.Context, c *kafka.Client, group string, parts []Partition) (Positions, error) {
	req := &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{}}
	for _, p := range parts {
		req.Topics[p.Topic] = append(req.Topics[p.Topic], p.ID)
	}
	res, err := c.OffsetFetch(ctx, req)
	if err == nil {
		err = res.Error
	}
	if err != nil {
		return nil, fmt.Errorf("committed offsets of %s: %w", group, err)
	}
	out := Positions{}
	for topic, ps := range res.Topics {
		for _, p := range ps {
			if p.Error != nil {
				return nil, fmt.Errorf("committed offset of %s/%d: %w", topic, p.Partition, p.Error)
			}
			out[Partition{topic, p.Partition}] = p.CommittedOffset
		}
	}
	return out, nil
}

// PartitionsOf lists the partitions of topics; a topic that does not exist is an error.
func PartitionsOf(ctx context.Context, c *kafka.Client, topics []string) ([]Partition, error) {
	md, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: topics})
	if err != nil {
		return nil, fmt.Errorf("partitions of %v: %w", topics, err)
	}
	var out []Partition
	for _, t := range md.Topics {
		if t.Error != nil {
			return nil, fmt.Errorf("partitions of %s: %w", t.Name, t.Error)
		}
		for _, p := range t.Partitions {
			out = append(out, Partition{t.Name, p.ID})
		}
	}
	return out, nil
}

// NextOffsets asks where the partitions end: for each, the offset its next message will
// have (0: empty).
func NextOffsets(ctx context.Context, c *kafka.Client, parts []Partition) (Positions, error) {
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
	for _, p := range parts {
		req.Topics[p.Topic] = append(req.Topics[p.Topic], kafka.LastOffsetOf(p.ID))
	}
	res, err := c.ListOffsets(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("ends of %v: %w", parts, err)
	}
	out := Positions{}
	for topic, ps := range res.Topics {
		for _, p := range ps {
			if p.Error != nil {
				return nil, fmt.Errorf("end of %s/%d: %w", topic, p.Partition, p.Error)
			}
			out[Partition{topic, p.Partition}] = p.LastOffset
		}
	}
	return out, nil
}
