package api

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

var pageTmpl = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"money": func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	"when":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04Z") },
}).ParseFS(templateFS, "templates/page.html"))

// pageAssets are the page's static files, served under /page/.
var pageAssets = func() fs.FS {
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic(err)
	}
	return sub
}()

type best struct {
	O schemas.Observation
	N int
}

// page renders the cheapest current offer per GPU and pricing kind and the last runs.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	rows, err := s.current(r.Context(), store.Filter{})
	if err != nil {
		http.Error(w, "store: query failed", http.StatusServiceUnavailable)
		return
	}
	idx := map[[2]string]int{}
	var out []best
	for _, o := range rows {
		if o.GPU == schemas.UnknownGPU {
			continue
		}
		k := [2]string{o.GPU, o.Pricing}
		if i, ok := idx[k]; ok {
			out[i].N++
			continue
		}
		idx[k] = len(out)
		out = append(out, best{O: o, N: 1})
	}
	runs, _ := s.st.Runs(r.Context(), "", 30)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pageTmpl.Execute(w, map[string]any{"Best": out, "Runs": runs}); err != nil {
		s.log.Warn("page not rendered", "error", err.Error())
	}
}
