package aws

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

// generateOffer writes an offer file of n products in the real layout (products, then
// OnDemand and Reserved terms), one in 25 a Linux GPU instance, without holding it: the
// file is produced as it is read.
func generateOffer(n int) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 64<<10)
		fmt.Fprint(w, `{"formatVersion":"v1.0","offerCode":"AmazonEC2","version":"20251101000000","publicationDate":"2025-11-01T00:00:00Z","products":{`)
		for i := range n {
			it, fam := "m5.large", "General purpose"
			gpu := ""
			if i%25 == 0 {
				it, fam, gpu = "g5.xlarge", "GPU instance", `"gpu":"1","gpuMemory":"24 GB",`
			}
			if i > 0 {
				w.WriteString(",")
			}
			fmt.Fprintf(w, `"SKU%012d":{"sku":"SKU%012d","productFamily":"Compute Instance","attributes":{"servicecode":"AmazonEC2","location":"US East (Ohio)","locationType":"AWS Region","instanceType":"%s","currentGeneration":"Yes","instanceFamily":"%s","vcpu":"4","physicalProcessor":"AMD EPYC 7R32","clockSpeed":"3.3 GHz","memory":"16 GiB","storage":"1 x 250 NVMe SSD","networkPerformance":"Up to 10 Gigabit","processorArchitecture":"64-bit","tenancy":"Shared","operatingSystem":"Linux","licenseModel":"No License required","usagetype":"USE2-BoxUsage:%s","operation":"RunInstances","availabilityzone":"NA","capacitystatus":"Used",%s"marketoption":"OnDemand","preInstalledSw":"NA","regionCode":"us-east-2","servicename":"Amazon Elastic Compute Cloud"}}`, i, i, it, fam, it, gpu)
		}
		w.WriteString(`},"terms":{"OnDemand":{`)
		for i := range n {
			if i > 0 {
				w.WriteString(",")
			}
			fmt.Fprintf(w, `"SKU%012d":{"SKU%012d.JRTCKXETXF":{"offerTermCode":"JRTCKXETXF","sku":"SKU%012d","effectiveDate":"2025-11-01T00:00:00Z","priceDimensions":{"SKU%012d.JRTCKXETXF.6YS6EN2CT7":{"rateCode":"SKU%012d.JRTCKXETXF.6YS6EN2CT7","description":"$1.006 per On Demand Linux g5.xlarge Instance Hour","beginRange":"0","endRange":"Inf","unit":"Hrs","pricePerUnit":{"USD":"1.0060000000"},"appliesTo":[]}},"termAttributes":{}}}`, i, i, i, i, i)
		}
		w.WriteString(`},"Reserved":{`)
		for i := range n {
			if i > 0 {
				w.WriteString(",")
			}
			fmt.Fprintf(w, `"SKU%012d":{`, i)
			for j, code := range []string{"4NA7Y494T4", "BPH4J8HBKS", "7NE97W5U4E"} {
				if j > 0 {
					w.WriteString(",")
				}
				class, lease := "standard", "1yr"
				if j == 1 {
					lease = "3yr"
				} else if j == 2 {
					class = "convertible"
				}
				fmt.Fprintf(w, `"SKU%012d.%s":{"offerTermCode":"%s","sku":"SKU%012d","effectiveDate":"2025-11-01T00:00:00Z","priceDimensions":{"SKU%012d.%s.6YS6EN2CT7":{"rateCode":"SKU%012d.%s.6YS6EN2CT7","description":"Linux/UNIX (Amazon VPC), g5.xlarge reserved instance applied","beginRange":"0","endRange":"Inf","unit":"Hrs","pricePerUnit":{"USD":"0.6340000000"},"appliesTo":[]}},"termAttributes":{"LeaseContractLength":"%s","OfferingClass":"%s","PurchaseOption":"No Upfront"}}`,
					i, code, code, i, i, code, i, code, lease, class)
			}
			w.WriteString("}")
		}
		w.WriteString(`}},"attributesList":{}}`)
		pw.CloseWithError(w.Flush())
	}()
	return pr
}

// heapWatch counts bytes read and samples the live heap every step bytes, keeping
// the peak.
type heapWatch struct {
	r         io.Reader
	n, next   int64
	step      int64
	peakHeap  uint64
	baseAlloc uint64
}

func newHeapWatch(r io.Reader, step int64) *heapWatch {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return &heapWatch{r: r, step: step, next: step, baseAlloc: ms.HeapAlloc}
}

func (h *heapWatch) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.n += int64(n)
	if h.n >= h.next {
		h.next += h.step
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > h.baseAlloc && ms.HeapAlloc-h.baseAlloc > h.peakHeap {
			h.peakHeap = ms.HeapAlloc - h.baseAlloc
		}
	}
	return n, err
}

// TestStreamOfferBoundedMemory streams a generated offer file of tens of megabytes and
// checks that the heap never grows with it.
func TestStreamOfferBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a large file")
	}
	const n = 12000
	body := generateOffer(n)
	defer body.Close()
	w := newHeapWatch(body, 1<<20)
	rows := 0
	st, err := streamOffer(w, "us-east-2", scrapertest.ObservedAt, func(schemas.Observation) { rows++ })
	if err != nil {
		t.Fatal(err)
	}
	if st.Products != n || st.GPUProducts != n/25 || rows != 3*n/25 || st.Skipped[skipConvertible] != n/25 {
		t.Errorf("stats %+v, rows %d", st, rows)
	}
	if w.n < 30<<20 {
		t.Fatalf("generated only %d bytes", w.n)
	}
	if limit := uint64(w.n / 4); w.peakHeap > limit {
		t.Errorf("heap grew by %d bytes while streaming %d bytes (limit %d)", w.peakHeap, w.n, limit)
	}
	t.Logf("streamed %d MB, peak heap growth %.1f MB", w.n>>20, float64(w.peakHeap)/(1<<20))
}

// BenchmarkStreamOffer streams a generated offer file; bytes/op is what is allocated
// over the whole file (garbage, proportional to its size), file-MB its size and
// peak-heap-MB the most the live heap grew while reading it (bounded, not proportional).
func BenchmarkStreamOffer(b *testing.B) {
	for _, n := range []int{2000, 8000} {
		b.Run(fmt.Sprintf("products=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var size int64
			var peak uint64
			for b.Loop() {
				body := generateOffer(n)
				w := newHeapWatch(body, 1<<20)
				if _, err := streamOffer(w, "us-east-2", scrapertest.ObservedAt, func(schemas.Observation) {}); err != nil {
					b.Fatal(err)
				}
				body.Close()
				size = w.n
				peak = max(peak, w.peakHeap)
			}
			b.ReportMetric(float64(size)/(1<<20), "file-MB")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}
