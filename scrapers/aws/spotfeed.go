package aws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// spotFeed is the public spot price feed behind the EC2 spot pricing page
// (spot.js: JSONP, callback({...})).
type spotFeed struct {
	Vers   float64 `json:"vers"`
	Config *struct {
		Rate         string   `json:"rate"`
		ValueColumns []string `json:"valueColumns"`
		Currencies   []string `json:"currencies"`
		Regions      []struct {
			Region        string `json:"region"`
			InstanceTypes []struct {
				Type  string `json:"type"`
				Sizes []struct {
					Size         string `json:"size"`
					ValueColumns []struct {
						Name   string            `json:"name"`
						Prices map[string]string `json:"prices"`
					} `json:"valueColumns"`
				} `json:"sizes"`
			} `json:"instanceTypes"`
		} `json:"regions"`
	} `json:"config"`
}

// feedRegions maps the older region names of the feed to region codes; current
// feeds use region codes, which pass unchanged.
var feedRegions = map[string]string{
	"us-east":    "us-east-1",
	"us-west":    "us-west-1",
	"eu-ireland": "eu-west-1",
	"apac-sin":   "ap-southeast-1",
	"apac-syd":   "ap-southeast-2",
	"apac-tokyo": "ap-northeast-1",
}

// spotFeedResult is what the feed yields (scrapers.Result).
type spotFeedResult = scrapers.Result

// Reasons a feed entry yields no row.
const (
	skipRegion   = "region_not_configured"
	skipNotOffer = "not_offered" // "N/A*": the type is not sold as spot there
)

// unwrapJSONP returns the JSON inside callback(...), skipping the comment the file
// starts with. Plain JSON passes unchanged.
func unwrapJSONP(data []byte) ([]byte, error) {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && (t[0] == '{') {
		return t, nil
	}
	i := bytes.Index(t, []byte("callback("))
	if i < 0 {
		return nil, errors.New("aws: spot feed: no callback(…) wrapper")
	}
	t = t[i+len("callback("):]
	t = bytes.TrimRight(t, "; \t\r\n")
	if !bytes.HasSuffix(t, []byte(")")) {
		return nil, errors.New("aws: spot feed: unterminated callback(…)")
	}
	return t[:len(t)-1], nil
}

// parseSpotFeed turns the feed into spot rows of the GPU sizes in the given regions
// (all regions when regions is empty). It is pure. The feed has no zones and no
// timestamps: zone is "" and effective_at is observedAt.
func parseSpotFeed(data []byte, regions map[string]bool, observedAt time.Time) (spotFeedResult, error) {
	body, err := unwrapJSONP(data)
	if err != nil {
		return spotFeedResult{}, err
	}
	var f spotFeed
	if err := json.Unmarshal(body, &f); err != nil {
		return spotFeedResult{}, fmt.Errorf("aws: decoding spot feed: %w", err)
	}
	if f.Config == nil || f.Config.Regions == nil {
		return spotFeedResult{}, errors.New("aws: spot feed has no config.regions")
	}
	unit := schemas.UnitHour
	if f.Config.Rate != "" && f.Config.Rate != "perhr" {
		unit = f.Config.Rate
	}
	res := spotFeedResult{Rows: []schemas.Observation{}}
	skip := func(reason string) {
		if res.Skipped == nil {
			res.Skipped = map[string]int{}
		}
		res.Skipped[reason]++
	}
	for _, reg := range f.Config.Regions {
		code := reg.Region
		if c, ok := feedRegions[code]; ok {
			code = c
		}
		for _, it := range reg.InstanceTypes {
			for _, sz := range it.Sizes {
				spec := specOf(sz.Size)
				if !spec.Known {
					continue
				}
				if len(regions) > 0 && !regions[code] {
					skip(skipRegion)
					continue
				}
				for _, vc := range sz.ValueColumns {
					if vc.Name != "linux" {
						continue
					}
					for _, cur := range sortedKeys(vc.Prices) {
						text := vc.Prices[cur]
						if strings.HasPrefix(text, "N/A") {
							skip(skipNotOffer)
							continue
						}
						o := schemas.Observation{
							ObservedAt:   observedAt,
							EffectiveAt:  observedAt,
							Provider:     Provider,
							SKU:          sz.Size,
							Region:       code,
							Pricing:      schemas.Spot,
							Currency:     cur,
							Unit:         unit,
							GPUName:      spec.GPUName,
							GPUCount:     spec.GPUCount,
							GPUMemoryGB:  spec.MemoryGB,
							Interconnect: spec.Interconnect,
							SourceKind:   schemas.SourceScrape,
							Attrs:        map[string]string{"feed_region": reg.Region, "feed_type": it.Type},
						}
						v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
						if err != nil {
							v = 0
							o.Attrs["price_text"] = text
						}
						o.PriceNative = v
						res.Rows = append(res.Rows, o)
					}
				}
			}
		}
	}
	return res, nil
}
