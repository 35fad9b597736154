package aws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// regionIndex is the public bulk price list's region index
// (…/offers/v1.0/aws/AmazonEC2/current/region_index.json).
type regionIndex struct {
	FormatVersion   string `json:"formatVersion"`
	Disclaimer      string `json:"disclaimer"`
	PublicationDate string `json:"publicationDate"`
	Regions         map[string]struct {
		RegionCode        string `json:"regionCode"`
		CurrentVersionURL string `json:"currentVersionUrl"`
	} `json:"regions"`
}

// parseRegionIndex returns each region's current offer file URL (as published:
// a path on the price list host).
func parseRegionIndex(r io.Reader) (map[string]string, error) {
	var idx regionIndex
	if err := json.NewDecoder(r).Decode(&idx); err != nil {
		return nil, fmt.Errorf("aws: decoding region index: %w", err)
	}
	if len(idx.Regions) == 0 {
		return nil, errors.New("aws: region index lists no regions")
	}
	out := make(map[string]string, len(idx.Regions))
	for k, v := range idx.Regions {
		code := v.RegionCode
		if code == "" {
			code = k
		}
		if v.CurrentVersionURL != "" {
			out[code] = v.CurrentVersionURL
		}
	}
	return out, nil
}

// offerStats is what one streamed offer file yielded.
type offerStats struct {
	Products    int            `json:"products"`
	GPUProducts int            `json:"gpu_products"`
	Rows        int            `json:"rows"`
	Skipped     map[string]int `json:"skipped,omitempty"`
}

func (s *offerStats) skip(reason string) {
	if s.Skipped == nil {
		s.Skipped = map[string]int{}
	}
	s.Skipped[reason]++
}

// ErrTermsFirst is returned for an offer file whose "terms" come before its
// "products": it cannot be streamed with bounded memory.
var ErrTermsFirst = errors.New("aws: offer file lists terms before products")

// streamOffer reads a bulk offer file (the EC2 file of one region, gigabytes) token by
// token and emits the rows of its GPU products. It never holds the file, nor its
// products map: only the GPU products' bases are kept, keyed by product SKU, and the
// terms of each product are decoded one product at a time. The file lists "products"
// before "terms", as AWS publishes it. It is pure: regionHint is the region the file
// is for, used when a product has no regionCode.
func streamOffer(
	r io.Reader,
	regionHint string,
	observedAt time.Time,
	emit func(schemas.Observation),
) (offerStats, error) {
	var st offerStats
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return st, err
	}
	var wanted map[string]wantedProduct
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return st, err
		}
		switch key {
		case "products":
			if wanted, err = readProducts(dec, regionHint, observedAt, &st); err != nil {
				return st, err
			}
		case "terms":
			if wanted == nil {
				return st, ErrTermsFirst
			}
			if err := readTerms(dec, wanted, &st, emit); err != nil {
				return st, err
			}
		default:
			if err := skipValue(dec); err != nil {
				return st, err
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return st, err
	}
	if wanted == nil {
		return st, errors.New("aws: offer file has no products")
	}
	return st, nil
}

func readProducts(
	dec *json.Decoder,
	regionHint string,
	observedAt time.Time,
	st *offerStats,
) (map[string]wantedProduct, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	wanted := map[string]wantedProduct{}
	bases := map[string]*schemas.Observation{}
	for dec.More() {
		sku, err := stringToken(dec)
		if err != nil {
			return nil, err
		}
		var p product
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("aws: product %s: %w", sku, err)
		}
		st.Products++
		if reason := wantProduct(p); reason != "" {
			st.skip(reason)
			continue
		}
		if p.SKU == "" {
			p.SKU = sku
		}
		st.GPUProducts++
		// The products of one instance type differ mostly by their SKU (operating
		// system, tenancy, capacity variants…): those alike share one base, so that
		// what is kept until the terms grows by a map entry per product, not by an
		// observation and its attrs.
		b := productBase(p, regionHint, observedAt)
		delete(b.Attrs, "aws_sku")
		key, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("aws: product %s: %w", sku, err)
		}
		shared, ok := bases[string(key)]
		if !ok {
			shared = &b
			bases[string(key)] = shared
		}
		wanted[sku] = wantedProduct{base: shared, sku: p.SKU}
	}
	return wanted, expectDelim(dec, '}')
}

// wantedProduct is a GPU product read from an offer file's products: its base
// (shared with the products alike, without their SKU) and its SKU.
type wantedProduct struct {
	base *schemas.Observation
	sku  string
}

// observation is the product's base with its own SKU in the attrs.
func (w wantedProduct) observation() schemas.Observation {
	o := *w.base
	o.Attrs = cloneAttrs(w.base.Attrs)
	o.Attrs["aws_sku"] = w.sku
	return o
}

func readTerms(
	dec *json.Decoder,
	wanted map[string]wantedProduct,
	st *offerStats,
	emit func(schemas.Observation),
) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		kind, err := stringToken(dec)
		if err != nil {
			return err
		}
		if err := expectDelim(dec, '{'); err != nil {
			return err
		}
		for dec.More() {
			sku, err := stringToken(dec)
			if err != nil {
				return err
			}
			want, ok := wanted[sku]
			if !ok {
				if err := skipValue(dec); err != nil {
					return err
				}
				continue
			}
			var terms map[string]offerTerm
			if err := dec.Decode(&terms); err != nil {
				return fmt.Errorf("aws: terms %s.%s: %w", kind, sku, err)
			}
			ids := make([]string, 0, len(terms))
			for id := range terms {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			base := want.observation()
			for _, id := range ids {
				rows, reason := termRows(base, kind, terms[id])
				if reason != "" {
					st.skip(reason)
				}
				for _, o := range rows {
					st.Rows++
					emit(o)
				}
			}
		}
		if err := expectDelim(dec, '}'); err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return fmt.Errorf("aws: offer file: %w", err)
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("aws: offer file: got %v, want %q", t, want)
	}
	return nil
}

func stringToken(dec *json.Decoder) (string, error) {
	t, err := dec.Token()
	if err != nil {
		return "", fmt.Errorf("aws: offer file: %w", err)
	}
	s, ok := t.(string)
	if !ok {
		return "", fmt.Errorf("aws: offer file: got %v, want an object key", t)
	}
	return s, nil
}

// skipValue reads past the next value. It is decoded as raw bytes and dropped: the
// values skipped are one product's terms or a small top-level field, so this holds
// little, and it is several times faster than walking tokens.
func skipValue(dec *json.Decoder) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("aws: offer file: %w", err)
	}
	return nil
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
