package aws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// PartCapacityBlocks is the collect part that reads EC2 Capacity Blocks for ML
// offerings (DescribeCapacityBlockOfferings) as stock signals. It needs the EC2 API:
// it is on by default where the APIs are used (mode auto with credentials, api) and
// never runs in public mode.
const PartCapacityBlocks = "capacity_blocks"

// Capacity Block query defaults and limits. AWS takes durations "in 1-day increments
// up to 14 days, and in 7-day increments up to 182 days" and block starts "up to eight
// weeks in the future" (EC2 User Guide, "Find and purchase Capacity Blocks").
const (
	DefaultCapacityBlockHours  = 24
	MaxCapacityBlockHours      = 182 * 24
	DefaultCapacityBlockWindow = 14 * 24 * time.Hour
	MaxCapacityBlockWindow     = 8 * 7 * 24 * time.Hour
)

// capacityBlockInstances is the InstanceCount asked: one instance, the smallest block.
const capacityBlockInstances = 1

// maxCapacityBlockPages bounds the pages read for one instance type and region (AWS
// answers with a handful of offerings, one page).
const maxCapacityBlockPages = 20

// LabelCapacityBlock is the Label of a Capacity Block stock signal: the reservation
// type AWS gives a purchased block ("capacity-block").
const LabelCapacityBlock = "capacity-block"

// SKUSuffixCapacityBlock marks a Capacity Block series' SKU ("p5.48xlarge:capacity-block"),
// as the purchase options of reserved rows are marked: a block is not the on-demand or
// spot offer of its instance type, so its stock must not join their prices.
const SKUSuffixCapacityBlock = ":capacity-block"

// DefaultCapacityBlockTypes are the instance types asked for by default: the H100,
// H200, B200 and A100 sizes that AWS sells as Capacity Blocks (EC2 User Guide,
// "Capacity Blocks for ML", supported instance types).
var DefaultCapacityBlockTypes = []string{
	"p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "p4d.24xlarge",
}

// validCapacityBlockHours reports whether h is a duration AWS takes: whole days, by
// one day up to 14 days, by 7 days up to 182 days.
func validCapacityBlockHours(h int) bool {
	if h <= 0 || h%24 != 0 || h > MaxCapacityBlockHours {
		return false
	}
	d := h / 24
	return d <= 14 || d%7 == 0
}

// validateCapacityBlocks checks the capacity block options.
func (o Options) validateCapacityBlocks() error {
	if o.CapacityBlockTypes != nil && len(o.CapacityBlockTypes) == 0 {
		return errors.New("aws: options: capacity_block_types is empty")
	}
	known := map[string]bool{}
	for _, t := range gpuInstanceTypes() {
		known[t] = true
	}
	seen := map[string]bool{}
	for _, t := range o.CapacityBlockTypes {
		if spec := specOf(t); !known[t] || spec.GPUCount <= 0 {
			return fmt.Errorf("aws: options: capacity_block_types: %q is not a GPU instance type of the family table", t)
		}
		if seen[t] {
			return fmt.Errorf("aws: options: capacity_block_types lists %q twice", t)
		}
		seen[t] = true
	}
	if o.CapacityBlockHours != 0 && !validCapacityBlockHours(o.CapacityBlockHours) {
		return fmt.Errorf("aws: options: capacity_block_hours %d is not whole days, by 1 day up to 14 days "+
			"or by 7 days up to 182 days (24, 48, …, 336, 504, …, 4368)", o.CapacityBlockHours)
	}
	if o.CapacityBlockWindow != "" {
		d, err := time.ParseDuration(o.CapacityBlockWindow)
		if err != nil {
			return fmt.Errorf("aws: options: capacity_block_window: %w", err)
		}
		if d <= 0 || d > MaxCapacityBlockWindow {
			return fmt.Errorf("aws: options: capacity_block_window %s is not in (0, %s]", d, MaxCapacityBlockWindow)
		}
	}
	for _, r := range o.CapacityBlockRegions {
		if !regionRE.MatchString(r) {
			return fmt.Errorf("aws: options: capacity_block_regions: %q is not a region code such as us-east-1", r)
		}
	}
	if o.Mode == ModePublic {
		for _, p := range o.Collect {
			if p == PartCapacityBlocks {
				return errors.New("aws: options: collect capacity_blocks needs the EC2 API, which mode public never calls")
			}
		}
	}
	return nil
}

// capacityBlockTypeCodes are the EC2 error codes of a request refused for its
// parameters (an instance type the region does not sell as blocks): the next type of
// the region is still asked.
var capacityBlockTypeCodes = map[string]bool{
	"InvalidParameterValue":       true,
	"InvalidParameterCombination": true,
	"InvalidParameter":            true,
	"InvalidInstanceType":         true,
	"Unsupported":                 true,
	"UnsupportedOperation":        true,
}

// capacityBlockAnswer is what EC2 answered for one instance type in one region: every
// page's offerings.
type capacityBlockAnswer struct {
	InstanceType string
	Offerings    []ec2types.CapacityBlockOffering
}

// collectCapacityBlocks asks EC2 in each region of the part for the Capacity Block
// offerings of each configured instance type (one instance, the configured duration,
// starting from now and ending within the window plus the duration) and sends them as
// stock signals (capacityBlockSignals). It never fails the run: a refused permission
// stops the part with a warning; another failure skips the instance type (a parameter
// error) or the rest of the region (throttling after the SDK's retries, a server or
// transport error), with one warning per region; the prices stand. A run that takes no
// signals does not ask.
func (s *Source) collectCapacityBlocks(ctx context.Context, ac awssdk.Config, e scrapers.Emitter) {
	if _, ok := e.(scrapers.SignalEmitter); !ok {
		return
	}
	log := s.log()
	now := s.cfg.Now().UTC().Truncate(time.Second)
	end := now.Add(s.cbWindow + time.Duration(s.cbHours)*time.Hour)
	for _, region := range s.opts.CapacityBlockRegions {
		client := ec2.NewFromConfig(ac, func(o *ec2.Options) {
			o.Region = region
			if s.opts.EC2Endpoint != "" {
				o.BaseEndpoint = awssdk.String(s.opts.EC2Endpoint)
			}
		})
		src := s.opts.EC2Endpoint
		if src == "" {
			src = "https://ec2." + region + ".amazonaws.com"
		}
		var answers []capacityBlockAnswer
		var failed []string
		var firstErr error
		for i, it := range s.opts.CapacityBlockTypes {
			offs, err := describeCapacityBlocks(ctx, client, region, &ec2.DescribeCapacityBlockOfferingsInput{
				InstanceType:          awssdk.String(it),
				InstanceCount:         awssdk.Int32(capacityBlockInstances),
				CapacityDurationHours: awssdk.Int32(int32(s.cbHours)),
				StartDateRange:        awssdk.Time(now),
				EndDateRange:          awssdk.Time(end),
			})
			if err == nil {
				answers = append(answers, capacityBlockAnswer{InstanceType: it, Offerings: offs})
				continue
			}
			if ctx.Err() != nil {
				return
			}
			if isAuthError(err) {
				log.Warn("capacity block offerings refused for the credentials: none read this run",
					"region", region, "error", err.Error())
				return
			}
			if firstErr == nil {
				firstErr = err
			}
			if apiErrorIn(err, capacityBlockTypeCodes) {
				failed = append(failed, it)
				continue
			}
			failed = append(failed, s.opts.CapacityBlockTypes[i:]...)
			break
		}
		if len(failed) > 0 {
			log.Warn("capacity block offerings not read: no stock signal for these types this run",
				"region", region, "types", strings.Join(failed, ","), "error", firstErr.Error())
		}
		res := capacityBlockSignals(region, answers, s.cbHours, now, src)
		for _, r := range res.Rejects {
			if !scrapers.Reject(e, r.Raw, r.Reason) {
				log.Warn("capacity block offering not read", "region", region, "reason", r.Reason)
			}
		}
		scrapers.EmitSignals(e, res.Signals...)
		log.Debug("capacity block offerings read", "region", region, "types", len(answers),
			"signals", len(res.Signals), "rejected", len(res.Rejects))
	}
}

// describeCapacityBlocks reads every page of one DescribeCapacityBlockOfferings query.
// A page that fails fails the whole answer: part of an answer would read as zones out
// of stock.
func describeCapacityBlocks(
	ctx context.Context,
	client ec2.DescribeCapacityBlockOfferingsAPIClient,
	region string,
	in *ec2.DescribeCapacityBlockOfferingsInput,
) ([]ec2types.CapacityBlockOffering, error) {
	p := ec2.NewDescribeCapacityBlockOfferingsPaginator(client, in,
		func(o *ec2.DescribeCapacityBlockOfferingsPaginatorOptions) { o.StopOnDuplicateToken = true })
	var out []ec2types.CapacityBlockOffering
	it := awssdk.ToString(in.InstanceType)
	for page := 1; p.HasMorePages(); page++ {
		if page > maxCapacityBlockPages {
			return nil, fmt.Errorf("aws: DescribeCapacityBlockOfferings %s %s: more than %d pages",
				region, it, maxCapacityBlockPages)
		}
		res, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("aws: DescribeCapacityBlockOfferings %s %s page %d: %w", region, it, page, err)
		}
		out = append(out, res.CapacityBlockOfferings...)
	}
	return out, nil
}

// capacityBlockResult is what capacityBlockSignals makes of one region's answers.
type capacityBlockResult struct {
	Signals []schemas.Signal `json:"signals"`
	Rejects []reject         `json:"rejects,omitempty"`
}

// capacityBlockSignals turns one region's DescribeCapacityBlockOfferings answers (one
// per instance type asked and answered) into stock signals. It is pure. Rules:
//   - One signal per (instance type, availability zone) with offerings: SKU the type
//     with SKUSuffixCapacityBlock, Zone the offering's availabilityZone, Value the
//     largest instanceCount offered there (the instances a block can be reserved for;
//     with one instance asked, 1), Label LabelCapacityBlock, unit "instances".
//   - Attrs describe the zone's earliest-starting offering (ties: the cheaper per
//     GPU-hour): earliest_start, end_date (RFC 3339), duration_hours (its
//     capacityBlockDurationHours and Minutes, else endDate − startDate), offering_id,
//     tenancy, currency, upfront_fee_usd and usd_gpu_hour = upfrontFee / (duration
//     hours × instances × GPUs per instance); min_usd_gpu_hour is the cheapest of the
//     zone's offerings, offerings their count. A currency other than USD gives
//     upfront_fee, price_gpu_hour and min_price_gpu_hour instead; a fee that is not a
//     number gives upfront_fee_text and no per-GPU-hour price.
//   - Out of stock is a fact: a type without an offering in a zone that another answer
//     of the region names gets a Value 0 signal there; when no answer of the region
//     names a zone, each type answered gets one region-level (Zone "") Value 0 signal.
//     A type not answered (a failed call) gets none.
//   - gpu_name, gpu_count and gpu_memory_gb come from the family table (ingest derives
//     the canonical GPU from them); requested_hours is the duration asked.
//   - An offering without an availability zone, or of another instance type than the
//     one asked, is a reject.
//
// Signals are sorted by SKU, then zone; their times are at.
func capacityBlockSignals(
	region string,
	answers []capacityBlockAnswer,
	hours int,
	at time.Time,
	sourceURL string,
) capacityBlockResult {
	res := capacityBlockResult{Signals: []schemas.Signal{}}
	type typeZones struct {
		it    string
		zones map[string][]ec2types.CapacityBlockOffering
	}
	all := map[string]bool{}
	var types []typeZones
	for _, a := range answers {
		tz := typeZones{it: a.InstanceType, zones: map[string][]ec2types.CapacityBlockOffering{}}
		for _, o := range a.Offerings {
			zone := awssdk.ToString(o.AvailabilityZone)
			it := awssdk.ToString(o.InstanceType)
			switch {
			case zone == "":
				res.Rejects = append(res.Rejects, reject{Raw: offeringJSON(o),
					Reason: "aws: capacity block offering without availability zone"})
				continue
			case it != "" && it != a.InstanceType:
				res.Rejects = append(res.Rejects, reject{Raw: offeringJSON(o),
					Reason: fmt.Sprintf("aws: capacity block offering of %s in the answer for %s", it, a.InstanceType)})
				continue
			}
			tz.zones[zone] = append(tz.zones[zone], o)
			all[zone] = true
		}
		types = append(types, tz)
	}
	src := schemas.RedactURL(sourceURL)
	for _, tz := range types {
		spec := specOf(tz.it)
		base := func(zone string) schemas.Signal {
			attrs := map[string]string{"unit": UnitInstances, "instance_type": tz.it, "gpu_name": spec.GPUName,
				"requested_hours": strconv.Itoa(hours)}
			if spec.GPUCount > 0 {
				attrs["gpu_count"] = schemas.FormatNum(spec.GPUCount)
			}
			if spec.MemoryGB > 0 {
				attrs["gpu_memory_gb"] = schemas.FormatNum(spec.MemoryGB)
			}
			if zone != "" && !strings.HasPrefix(zone, region) {
				attrs["zone_region_mismatch"] = "true"
			}
			return schemas.Signal{ObservedAt: at, EffectiveAt: at, Provider: Provider, SKU: tz.it + SKUSuffixCapacityBlock,
				Region: region, Zone: zone, Kind: schemas.SignalStock, Label: LabelCapacityBlock, SourceURL: src,
				Attrs: attrs}
		}
		if len(all) == 0 {
			s := base("")
			s.Attrs["offerings"] = "0"
			res.Signals = append(res.Signals, s)
			continue
		}
		for zone := range all {
			s := base(zone)
			offs := tz.zones[zone]
			s.Attrs["offerings"] = strconv.Itoa(len(offs))
			if len(offs) > 0 {
				s.Value = describeOfferings(offs, spec.GPUCount, s.Attrs)
			}
			res.Signals = append(res.Signals, s)
		}
	}
	sort.SliceStable(res.Signals, func(i, j int) bool {
		a, b := res.Signals[i], res.Signals[j]
		if a.SKU != b.SKU {
			return a.SKU < b.SKU
		}
		return a.Zone < b.Zone
	})
	return res
}

// UnitInstances is the unit of a stock signal that counts instances.
const UnitInstances = "instances"

// offeringFacts are the figures of one offering.
type offeringFacts struct {
	o         ec2types.CapacityBlockOffering
	start     time.Time // zero when not stated
	hours     float64   // the block's duration, 0 when not known
	instances float64
	fee       float64
	feeOK     bool
	perGPUH   float64 // fee per GPU-hour, 0 when not known
}

func factsOf(o ec2types.CapacityBlockOffering, gpus float64) offeringFacts {
	f := offeringFacts{o: o, instances: capacityBlockInstances}
	if o.InstanceCount != nil && *o.InstanceCount > 0 {
		f.instances = float64(*o.InstanceCount)
	}
	if o.StartDate != nil {
		f.start = o.StartDate.UTC()
	}
	switch {
	case o.CapacityBlockDurationHours != nil:
		f.hours = float64(*o.CapacityBlockDurationHours) + float64(awssdk.ToInt32(o.CapacityBlockDurationMinutes))/60
	case o.StartDate != nil && o.EndDate != nil:
		f.hours = o.EndDate.Sub(*o.StartDate).Hours()
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(awssdk.ToString(o.UpfrontFee)), 64)
	if err == nil && v >= 0 && !math.IsInf(v, 0) {
		f.fee, f.feeOK = v, true
	}
	if f.feeOK && f.hours > 0 && gpus > 0 {
		f.perGPUH = f.fee / (f.hours * f.instances * gpus)
	}
	return f
}

// describeOfferings writes the attributes of a zone's offerings (see
// capacityBlockSignals) into attrs and returns the most instances offered.
func describeOfferings(offs []ec2types.CapacityBlockOffering, gpus float64, attrs map[string]string) float64 {
	facts := make([]offeringFacts, 0, len(offs))
	most, cheapest := 0.0, math.Inf(1)
	for _, o := range offs {
		f := factsOf(o, gpus)
		facts = append(facts, f)
		most = math.Max(most, f.instances)
		if f.perGPUH > 0 {
			cheapest = math.Min(cheapest, f.perGPUH)
		}
	}
	sort.SliceStable(facts, func(i, j int) bool {
		a, b := facts[i], facts[j]
		switch {
		case a.start.IsZero() != b.start.IsZero():
			return !a.start.IsZero()
		case !a.start.Equal(b.start):
			return a.start.Before(b.start)
		case a.perGPUH != b.perGPUH:
			return a.perGPUH > 0 && (b.perGPUH == 0 || a.perGPUH < b.perGPUH)
		}
		return awssdk.ToString(a.o.CapacityBlockOfferingId) < awssdk.ToString(b.o.CapacityBlockOfferingId)
	})
	f := facts[0]
	set := func(k, v string) {
		if v != "" {
			attrs[k] = v
		}
	}
	if !f.start.IsZero() {
		attrs["earliest_start"] = f.start.Format(time.RFC3339)
	}
	if f.o.EndDate != nil {
		attrs["end_date"] = f.o.EndDate.UTC().Format(time.RFC3339)
	}
	if f.hours > 0 {
		attrs["duration_hours"] = schemas.FormatNum(f.hours)
	}
	set("offering_id", awssdk.ToString(f.o.CapacityBlockOfferingId))
	set("tenancy", string(f.o.Tenancy))
	currency := strings.TrimSpace(awssdk.ToString(f.o.CurrencyCode))
	set("currency", currency)
	feeKey, hourKey, minKey := "upfront_fee", "price_gpu_hour", "min_price_gpu_hour"
	if currency == "USD" {
		feeKey, hourKey, minKey = "upfront_fee_usd", "usd_gpu_hour", "min_usd_gpu_hour"
	}
	switch {
	case f.feeOK:
		attrs[feeKey] = schemas.FormatNum(f.fee)
	default:
		attrs["upfront_fee_text"] = awssdk.ToString(f.o.UpfrontFee)
	}
	if f.perGPUH > 0 {
		attrs[hourKey] = schemas.FormatNum(f.perGPUH)
	}
	if !math.IsInf(cheapest, 1) {
		attrs[minKey] = schemas.FormatNum(cheapest)
	}
	return most
}

func offeringJSON(o ec2types.CapacityBlockOffering) string {
	raw, _ := json.Marshal(o)
	return string(raw)
}
