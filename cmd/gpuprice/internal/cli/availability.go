package cli

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics/query"
)

func init() { addCommand((*app).availabilityCmd) }

func (a *app) availabilityCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "availability",
		Short: "Stock over a window: share of time in stock, outages; --need N: who can supply N GPUs now",
		Long: `availability reads the stored stock and marketplace-depth signals (RunPod's stock per
GPU type and cloud, Vast.ai's rentable offers, Lambda's regions with capacity,
Crusoe's capacities; docs/risk.md) as a timeline per offer: each signal holds
until the next one of its series, three hours at most (then the offer is not
observed, neither in stock nor out). Per offer, or per provider's GPU with
--by gpu (in stock while any of its offers is), it gives the share of the observed
time in stock, the outages and the longest, and the newest stock; least available
first. The window is --since/--until (default the last 7 days).

--need N answers "where can I get N GPUs now": the offers whose newest stock can
supply N GPUs (units of instances times the GPUs per instance), each current price
of the offer with the expected price of a GPU-hour of work once interruptions are
counted (--checkpoint, --restart; spot without a band: unknown), cheapest first;
offers whose stock counts regions, not GPUs, come after. The same answer is
GET /api/v1/availability.`,
		Example: `  gpuprice availability --gpu h100 --since 30d
  gpuprice availability --gpu h100 --by gpu
  gpuprice availability --gpu h100 --need 64`,
		Args: cobra.NoArgs,
	}
	p := newParams(cmd)
	p.signalFilters("SKU (the offer, as prices lists it)")
	p.String("since", "", "from this time (a date, RFC 3339, or a duration back: 30d; default 7d)")
	p.String("until", "", "before this time (a date or RFC 3339; default now)")
	p.String("by", "offer", "offer or gpu (each provider's GPU)")
	p.String("step", "", "with --format json: also each provider's GPU's stock sampled every step (1h)")
	// --need, and --checkpoint and --restart that price its offers, are parameters with --need only.
	need := p.fl.Int("need", 0, "the GPUs needed now: list the offers that can supply them, cheapest first")
	checkpoint := p.fl.String("checkpoint", "30m", "with --need: time between the job's checkpoints")
	restart := p.fl.String("restart", "10m", "with --need: time from an interruption to work resuming")
	format := formatFlag(p.fl)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		v := p.values()
		if *need > 0 {
			v.Set("need", strconv.Itoa(*need))
			v.Set("checkpoint", *checkpoint)
			v.Set("restart", *restart)
		} else if *need < 0 {
			return usagef("--need: %d: give a count of GPUs (> 0)", *need)
		} else if p.fl.Changed("checkpoint") || p.fl.Changed("restart") {
			return usagef("--checkpoint and --restart price the offers of --need: give --need")
		}
		return read(a, cmd, v, query.ParseAvailability, query.Source.Availability,
			func(q query.AvailabilityQuery, res query.Result[query.Availability]) error {
				header, rows := res.Data.Table()
				empty := "no stock signal stored matches in the window"
				if q.Need > 0 {
					empty = "no offer's stock now can supply " + strconv.Itoa(q.Need) + " GPUs"
				}
				return output(a.stdout, *format, header, rows, res.Data, empty)
			})
	}
	return cmd
}
