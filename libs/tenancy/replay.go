package tenancy

import (
	"sync"
	"time"
)

// DefaultReplayCapacity is how many nonces a Verifier remembers at most. A nonce is kept
// until its signature expires (its time plus MaxSkew, 30 s after it is sent), so the
// default holds a steady 30,000 requests a second for each replica (catalog-svc's reads run
// at some 7,000 a second per replica), in about 40 MiB when full (37 MiB measured) and some
// 6 MiB at 5,000 a second. A replica that receives more is refused with 503 rather than let
// requests through unchecked (docs/internal-auth.md).
const DefaultReplayCapacity = 1 << 20

// bucketSeconds groups nonces by when their signatures expire, so that expired ones are
// dropped a bucket at a time.
const bucketSeconds = 10

// replayCache remembers the nonces of accepted requests until their signatures expire. It
// lives in one process: a replica knows only the nonces it was sent itself.
type replayCache struct {
	mu      sync.Mutex
	max     int
	n       int
	buckets map[int64]map[replayKey]struct{} // by expiry (Unix seconds) / bucketSeconds
	swept   int64                            // the second of the last sweep
}

// replayKey is a caller's nonce: caller is the caller's number in its Verifier (17 bytes
// a key, where the name would take 32).
type replayKey struct {
	caller uint8
	nonce  [nonceBytes]byte
}

func newReplayCache(max int) *replayCache {
	if max < 1 {
		max = 1
	}
	return &replayCache{max: max, buckets: map[int64]map[replayKey]struct{}{}}
}

// add records caller's nonce, whose signature expires at expires: ErrReplay when it is
// already recorded, ErrBusy when the cache holds max unexpired nonces.
func (r *replayCache) add(caller uint8, nonce [nonceBytes]byte, expires, now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sec := now.Unix(); sec != r.swept {
		r.swept = sec
		for b, m := range r.buckets {
			// Every nonce of the bucket expires before now: its signature is refused as
			// expired before the cache is asked.
			if (b+1)*bucketSeconds <= sec {
				r.n -= len(m)
				delete(r.buckets, b)
			}
		}
	}
	b := expires.Unix() / bucketSeconds
	k := replayKey{caller, nonce}
	m := r.buckets[b]
	if _, seen := m[k]; seen {
		return ErrReplay
	}
	if r.n >= r.max {
		return ErrBusy
	}
	if m == nil {
		m = map[replayKey]struct{}{}
		r.buckets[b] = m
	}
	m[k] = struct{}{}
	r.n++
	return nil
}

// len is how many nonces the cache holds.
func (r *replayCache) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}
