package report

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumEnv names the Chromium (or Chrome) executable to print PDFs with.
const ChromiumEnv = "GPUPRICE_CHROMIUM"

// ExecPath finds a headless-capable Chromium: $GPUPRICE_CHROMIUM, else chromium,
// chromium-browser, google-chrome or google-chrome-stable on the PATH.
func ExecPath() (string, error) {
	if p := os.Getenv(ChromiumEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %w", ChromiumEnv, err)
		}
		return p, nil
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "",
		errors.New(
			"a PDF is printed by headless Chromium, and none was found: install it (Debian: apt-get install chromium) or set $" +
				ChromiumEnv +
				"; or write --out report.html and print that")
}

// PDFWindowWidth and PDFWindowHeight are the window PDF prints are laid out in.
const (
	PDFWindowWidth  = 1200
	PDFWindowHeight = 900
)

// Browser starts a headless Chromium (exe) with a throwaway profile in dir and a
// width x height window, and returns a tab's context; cancel ends the browser.
// It is the one launcher: the PDF printer and the browser tests use it.
func Browser(ctx context.Context, exe, dir string, width, height int) (context.Context, context.CancelFunc, error) {
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(dir),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(width, height),
	)
	tab, cancelTab := chromedp.NewContext(alloc)
	if err := chromedp.Do(tab, chromedp.Navigate("about:blank")); err != nil {
		cancelTab()
		cancelAlloc()
		return nil, nil, fmt.Errorf("starting %s: %w", exe, err)
	}
	return tab, func() { cancelTab(); cancelAlloc() }, nil
}

// FileURL is the file:// URL of a local path.
func FileURL(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return (&url.URL{Scheme: "file", Path: abs}).String()
}

// PrintPDF opens the HTML file at path in the browser tab and prints it: A4
// landscape (the page's @page rule), backgrounds, an outline of the sections,
// page numbers in the footer.
func PrintPDF(tab context.Context, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(tab, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(FileURL(path))); err != nil {
		return nil, fmt.Errorf("opening the report in Chromium: %w", err)
	}
	pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF(
		chromedp.PDFPreferCSSPageSize(),
		chromedp.PDFPrintBackground(),
		chromedp.PDFOutlineAndTagged(),
		chromedp.PDFHeaderTemplate(`<span></span>`),
		chromedp.PDFFooterTemplate(
			`<div style="font-size:8px;width:100%;text-align:center;color:#5b636e"><span class="title"></span> · <span `+
				`class="pageNumber"></span> / <span class="totalPages"></span></div>`),
		chromedp.PDFStream(),
	))
	if err != nil {
		return nil, fmt.Errorf("printing the report to PDF: %w", err)
	}
	return pdf, nil
}

// PDF prints an HTML report to PDF with a Chromium of its own (ExecPath).
func PDF(ctx context.Context, html []byte) ([]byte, error) {
	exe, err := ExecPath()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gpuprice-report-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, html, 0o600); err != nil {
		return nil, err
	}
	tab, cancel, err := Browser(ctx, exe, filepath.Join(dir, "profile"), PDFWindowWidth, PDFWindowHeight)
	if err != nil {
		return nil, err
	}
	defer cancel()
	return PrintPDF(tab, page)
}
