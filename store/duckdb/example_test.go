package duckdb_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpuprice/gpuprice/store"
	_ "github.com/gpuprice/gpuprice/store/duckdb" // registers duckdb://
	"github.com/gpuprice/gpuprice/store/storetest"
)

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "gpuprice-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	st, err := store.Open(ctx, "duckdb://"+filepath.Join(dir, "data", "gpuprice.duckdb"))
	if err != nil {
		panic(err)
	}
	defer st.Close()
	applied, _ := st.Migrate(ctx)
	again, _ := st.Migrate(ctx)
	fmt.Println("applied", applied, "then", again)

	if err := st.WriteObservations(ctx, storetest.Observations()); err != nil {
		panic(err)
	}
	cheapest, _ := st.Latest(ctx, store.Filter{GPU: "H100-SXM-80GB", Pricing: "on_demand"})
	for _, o := range cheapest[:3] {
		fmt.Printf("%s %s %s $%.2f/GPU-h\n", o.Provider, o.SKU, o.Region, o.PriceUSDGPUHour)
	}
	// Output:
	// applied [1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21] then []
	// lambda gpu_8x_h100_sxm5 us-south-1 $2.99/GPU-h
	// aws p5.48xlarge us-east-1 $6.88/GPU-h
	// azure Standard_ND96isr_H100_v5 eastus $6.88/GPU-h
}
