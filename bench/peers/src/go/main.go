// W6 peer "go-chan-pool": checkout-pool transactions with goroutines and
// channels, standard library only. Spec: ../../README.md (W6).
//
//	go-chan-pool W6 C M K
//
// The pool is a buffered channel of *member (capacity M, filled with the M
// members). A member is a goroutine that owns its request channel and its
// state (uses, acc). A consumer takes a member (m := <-pool), calls it
// (m.req <- request{v, reply}; r := <-reply) and gives it back (pool <- m).
// The time of every take (from just before <-pool until it returns) goes into
// the consumer's own latency histogram.
//
// Exit status: 0 ok, 1 verification failed, 2 usage, 3 workload other than W6.
package main

import (
	"bufio"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

const implName = "go-chan-pool"

// xs50 is the harness's per-message computation: 50 rounds of xorshift32
// (13,17,5) seeded with (v + 1) mod 2^32.
func xs50(v uint64) uint32 {
	s := uint32(v + 1)
	for i := 0; i < 50; i++ {
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
	}
	return s
}

func procStatusKB(key string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, key+":") {
			fields := strings.Fields(line[len(key)+1:])
			if len(fields) > 0 {
				v, _ := strconv.ParseInt(fields[0], 10, 64)
				return v
			}
		}
	}
	return -1
}

// ---------------------------------------------------------------------------
// Members.

type request struct {
	v     uint64
	reply chan<- uint32 // the calling consumer's reply channel
}

type memberStats struct {
	uses uint64
	acc  uint32
}

type member struct {
	req chan request // unbuffered: a call is a hand-off to the member
}

// serve is the member goroutine: answer each request with xs50(v) until the
// request channel is closed, then report the member's state.
func (m *member) serve(stats chan<- memberStats) {
	var st memberStats
	for rq := range m.req {
		r := xs50(rq.v)
		st.uses++
		st.acc ^= r
		rq.reply <- r
	}
	stats <- st
}

// ---------------------------------------------------------------------------
// Consumers.

type report struct {
	count uint64
	acc   uint32
	take  *latHist
}

func consume(j, k uint64, pool chan *member, ready *sync.WaitGroup, start <-chan struct{},
	base time.Time, reports chan<- report) {
	rep := report{take: new(latHist)}
	reply := make(chan uint32, 1)
	ready.Done()
	<-start
	for v := j * k; v < (j+1)*k; v++ {
		ta := time.Since(base)
		m := <-pool
		rep.take.record(int64(time.Since(base) - ta))
		m.req <- request{v, reply}
		r := <-reply
		pool <- m
		rep.count++
		rep.acc ^= r
	}
	reports <- rep
}

func w6(c, m, k uint64) int {
	base := time.Now() // time.Since(base) reads the monotonic clock
	stats := make(chan memberStats, m)
	pool := make(chan *member, m)
	members := make([]*member, m)
	for i := range members {
		members[i] = &member{req: make(chan request)}
		go members[i].serve(stats)
		pool <- members[i]
	}
	start := make(chan struct{})
	reports := make(chan report, c)
	var ready sync.WaitGroup // consumers have allocated their state (untimed)
	ready.Add(int(c))
	for j := uint64(0); j < c; j++ {
		go consume(j, k, pool, &ready, start, base, reports)
	}
	ready.Wait()

	t0 := time.Now()
	close(start)
	var count uint64
	var check uint32
	take := new(latHist)
	var firstReport time.Duration
	for j := uint64(0); j < c; j++ {
		r := <-reports
		if j == 0 {
			firstReport = time.Since(t0)
		}
		count += r.count
		check ^= r.acc
		take.merge(r.take)
	}
	secs := time.Since(t0).Seconds()

	// Untimed: stop the members and read their state.
	for _, mb := range members {
		close(mb.req)
	}
	var uses, usesMin, usesMax uint64
	var memberAcc uint32
	for i := uint64(0); i < m; i++ {
		st := <-stats
		uses += st.uses
		memberAcc ^= st.acc
		if i == 0 || st.uses < usesMin {
			usesMin = st.uses
		}
		if st.uses > usesMax {
			usesMax = st.uses
		}
	}

	rate := 0.0
	if secs > 0 {
		rate = float64(count) / secs
	}
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	fmt.Printf("RESULT workload=W6 impl=%s params=C=%d,M=%d,K=%d msgs=%d secs=%.4f rate=%.0f rss_kb=%d "+
		"check=%d p99_take_us=%.2f member_uses_min=%d member_uses_max=%d pool=chan "+
		"p50_take_us=%.2f max_take_us=%.2f takes_timed=%d take_hist=log2/%d first_report_secs=%.4f gomaxprocs=%d\n",
		implName, c, m, k, count, secs, rate, procStatusKB("VmHWM"),
		check, us(take.percentile(99)), usesMin, usesMax,
		us(take.percentile(50)), us(take.max), take.n, 1<<histSubBits, firstReport.Seconds(),
		runtime.GOMAXPROCS(0))

	ok := true
	if count != c*k || uses != c*k || take.n != c*k {
		fmt.Fprintf(os.Stderr, "go-chan-pool: count mismatch: consumers %d, member uses %d, takes %d, want %d\n",
			count, uses, take.n, c*k)
		ok = false
	}
	if memberAcc != check {
		fmt.Fprintf(os.Stderr, "go-chan-pool: xor of member accs %d != xor of consumer accs %d\n",
			memberAcc, check)
		ok = false
	}
	if !ok {
		return 1
	}
	return 0
}

// ---------------------------------------------------------------------------
// latHist: latency histogram in ns. Values below 128 are exact; above, each
// power of two is split into 2^histSubBits linear sub-buckets, so a bucket is
// at most 1/64 of its lower edge wide. The maximum is kept exactly.
// Bucket of v: with shift = max(0, bitlen(v) - 7), b = shift*64 + (v >> shift).

const (
	histSubBits = 6
	histMaxBits = 44 // values are clamped below 2^44 ns (~4.9 hours)
)

type latHist struct {
	n      uint64
	max    int64
	counts [(histMaxBits - histSubBits + 1) << histSubBits]uint64
}

func latBucket(v uint64) int {
	if v >= 1<<histMaxBits {
		v = 1<<histMaxBits - 1
	}
	shift := 0
	if n := bits.Len64(v); n > histSubBits+1 {
		shift = n - histSubBits - 1
	}
	return shift<<histSubBits + int(v>>shift)
}

// latUpper is the largest value that falls into bucket b.
func latUpper(b int) int64 {
	if b < 2<<histSubBits {
		return int64(b)
	}
	shift := b>>histSubBits - 1
	mant := int64(b&(1<<histSubBits-1) + 1<<histSubBits)
	return (mant+1)<<shift - 1
}

func (h *latHist) record(ns int64) {
	if ns < 0 {
		ns = 0
	}
	h.counts[latBucket(uint64(ns))]++
	h.n++
	if ns > h.max {
		h.max = ns
	}
}

func (h *latHist) merge(o *latHist) {
	for b, c := range o.counts {
		h.counts[b] += c
	}
	h.n += o.n
	if o.max > h.max {
		h.max = o.max
	}
}

// percentile p (integer percent) by nearest rank: the upper edge of the
// bucket holding sample number ceil(p*n/100), capped at the exact maximum.
func (h *latHist) percentile(p uint64) int64 {
	rank := (h.n*p + 99) / 100
	if rank == 0 {
		return 0
	}
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			if u := latUpper(b); u < h.max {
				return u
			}
			break
		}
	}
	return h.max
}

func main() {
	usage := func() {
		fmt.Fprintln(os.Stderr, "usage: go-chan-pool W6 C M K   (C consumers, M members, K transactions per consumer; all >= 1)")
		os.Exit(2)
	}
	if len(os.Args) < 2 {
		usage()
	}
	if os.Args[1] != "W6" {
		fmt.Fprintf(os.Stderr, "go-chan-pool: workload %s not supported (W6 only)\n", os.Args[1])
		os.Exit(3)
	}
	if len(os.Args) != 5 {
		usage()
	}
	var a [3]uint64
	for i := range a {
		v, err := strconv.ParseUint(os.Args[i+2], 10, 64)
		if err != nil || v == 0 {
			usage()
		}
		a[i] = v
	}
	os.Exit(w6(a[0], a[1], a[2]))
}
