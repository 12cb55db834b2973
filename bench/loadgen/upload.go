package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

const uploadUsage = `loadgen upload: POST /api/uploads N photo-like JPEGs of about -bytes each, C at a time.

Each image is generated before the clock starts and differs from every other (uploads are content
addressed: an image sent twice would be stored once and cost less). Uploads are signed: upload k
uses line k mod (lines) of -tokens, so the per-user upload budget (30 an hour) bounds N at 30 times
the tokens. With -pid, the server's CPU time per upload (from /proc) and its memory: VmRSS before
the first upload and the peak (VmHWM, reset through /proc/PID/clear_refs just before) while they run.

  loadgen upload -base http://127.0.0.1:18080 -tokens tokens.txt -n 40 -c 1 -bytes 2000000 -pid PID

Prints one markdown row; -variant-out FILE writes the first upload's thumbnail URL (the serving row
of make bench reads it).
`

type uploadResult struct {
	Label       string  `json:"label"`
	N           int     `json:"n"`
	Concurrency int     `json:"concurrency"`
	Bytes       int     `json:"bytes"` // mean size of the images sent
	P50Ms       float64 `json:"p50Ms"`
	P90Ms       float64 `json:"p90Ms"`
	MaxMs       float64 `json:"maxMs"`
	WallS       float64 `json:"wallS"`
	CPUMsPer    float64 `json:"cpuMsPerUpload,omitempty"` // the server's user+system CPU per upload
	RSSBeforeMB float64 `json:"rssBeforeMB,omitempty"`
	PeakMB      float64 `json:"peakMB,omitempty"`
	GrowthMB    float64 `json:"growthMB,omitempty"` // peak minus the RSS before
	PeakReset   bool    `json:"peakReset"`          // false: the peak is the process's since it started
}

func uploadMain(args []string) error {
	fs := flag.NewFlagSet("upload", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), uploadUsage); fs.PrintDefaults() }
	base := fs.String("base", "http://127.0.0.1:18080", "the server's base URL (loopback only)")
	tokenFile := fs.String("tokens", "", "access tokens, one per line (loadgen seed -writers)")
	n := fs.Int("n", 40, "uploads to send (1..1000)")
	c := fs.Int("c", 1, "uploads in flight at once (1..64)")
	size := fs.Int("bytes", 2_000_000, "about how large each JPEG is (100000..20000000)")
	pid := fs.Int("pid", 0, "the server's pid: CPU per upload and memory, from /proc")
	label := fs.String("label", "", "the row's name (default: N × SIZE, C at a time)")
	variantOut := fs.String("variant-out", "", "write the first upload's thumbnail URL to this file")
	jsonOut := fs.String("json", "", "also write the result as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *n > 1000 || *c < 1 || *c > 64 || *size < 100_000 || *size > 20_000_000 {
		return errors.New("-n must be 1..1000, -c 1..64, -bytes 100000..20000000")
	}
	if _, err := checkLoopbackURL(*base); err != nil {
		return err
	}
	tokens, err := readTokenLines(*tokenFile)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "loadgen upload: generating %d JPEGs of about %d bytes\n", *n, *size)
	images := photoJPEGs(*n, *size)
	r := uploadResult{Label: *label, N: *n, Concurrency: *c}
	for _, img := range images {
		r.Bytes += len(img)
	}
	r.Bytes /= len(images)
	if r.Label == "" {
		r.Label = fmt.Sprintf("%d × %.1f MB JPEG, %d at a time", *n, float64(r.Bytes)/1e6, *c)
	}

	var cpuBefore uint64
	if *pid > 0 {
		rss, _, err := readRSS(*pid)
		if err != nil {
			return fmt.Errorf("-pid %d: %w", *pid, err)
		}
		r.RSSBeforeMB = float64(rss) / 1024
		// "5" resets the peak RSS to the current RSS (Linux 4.0+), so the peak is this load's.
		r.PeakReset = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", *pid), []byte("5"), 0) == nil
		if cpuBefore, err = procTicks(*pid); err != nil {
			return err
		}
	}
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: *c}}
	lat := make([]time.Duration, *n)
	var firstThumb string
	var mu sync.Mutex
	var firstErr error
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range *c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				t0 := time.Now()
				thumb, err := uploadOne(client, *base, tokens[k%len(tokens)], images[k])
				lat[k] = time.Since(t0)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("upload %d: %w", k, err)
				}
				if k == 0 {
					firstThumb = thumb
				}
				mu.Unlock()
			}
		}()
	}
	for k := range *n {
		next <- k
	}
	close(next)
	wg.Wait()
	r.WallS = time.Since(start).Seconds()
	if firstErr != nil {
		return firstErr
	}
	if *pid > 0 {
		cpuAfter, err := procTicks(*pid)
		if err != nil {
			return err
		}
		r.CPUMsPer = float64(cpuAfter-cpuBefore) * 1000 / clockTicks / float64(*n)
		_, peak, err := readRSS(*pid)
		if err != nil {
			return err
		}
		r.PeakMB = float64(peak) / 1024
		r.GrowthMB = r.PeakMB - r.RSSBeforeMB
	}
	slices.Sort(lat)
	r.P50Ms, r.P90Ms, r.MaxMs = toMs(percentile(lat, 0.5)), toMs(percentile(lat, 0.9)), toMs(lat[len(lat)-1])

	if *variantOut != "" {
		if err := os.WriteFile(*variantOut, []byte(firstThumb+"\n"), 0o644); err != nil {
			return err
		}
	}
	if *jsonOut != "" {
		raw, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(*jsonOut, raw, 0o644); err != nil {
			return err
		}
	}
	printUploadRow(os.Stdout, r)
	return nil
}

func printUploadRow(w io.Writer, r uploadResult) {
	fmt.Fprintln(w, "| uploads | p50 ms | p90 ms | max ms | wall | server CPU per upload | server RSS before | peak while uploading | growth |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	cpu, rss, peak, growth := "–", "–", "–", "–"
	if r.CPUMsPer > 0 {
		cpu = fmt.Sprintf("%.0f ms", r.CPUMsPer)
		rss = fmt.Sprintf("%.0f MB", r.RSSBeforeMB)
		peak = fmt.Sprintf("%.0f MB", r.PeakMB)
		if !r.PeakReset {
			peak += " (since start)"
		}
		growth = fmt.Sprintf("%.0f MB", r.GrowthMB)
	}
	fmt.Fprintf(w, "| %s | %s | %s | %s | %.1f s | %s | %s | %s | %s |\n",
		r.Label, ms(r.P50Ms), ms(r.P90Ms), ms(r.MaxMs), r.WallS, cpu, rss, peak, growth)
}

// uploadOne sends one multipart upload and returns the thumbnail variant's URL.
func uploadOne(client *http.Client, base, token string, img []byte) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("file", "photo.jpg")
	if err != nil {
		return "", err
	}
	if _, err := part.Write(img); err != nil {
		return "", err
	}
	if err := mw.Close(); err != nil {
		return "", err
	}
	req, err := http.NewRequest(http.MethodPost, base+"/api/uploads", &body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Token "+token)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(string(raw)))
	}
	var out struct {
		Upload struct {
			Variants map[string]struct {
				URL string `json:"url"`
			} `json:"variants"`
		} `json:"upload"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("answer: %w", err)
	}
	return out.Upload.Variants["thumb"].URL, nil
}

// photoJPEGs returns n distinct photo-like JPEGs (gradients with noise) of about size bytes each:
// a 3:2 frame whose area is picked from a first trial encoding, so that noise at quality 92 lands
// near size.
func photoJPEGs(n, size int) [][]byte {
	// About 0.55 bytes per pixel at this noise and quality (measured by the first encoding below).
	w, h := frameFor(float64(size) / 0.55)
	first := photoJPEG(w, h, 0)
	if ratio := float64(size) / float64(len(first)); ratio < 0.9 || ratio > 1.1 {
		w, h = frameFor(float64(w*h) * ratio)
		first = photoJPEG(w, h, 0)
	}
	out := [][]byte{first}
	for k := 1; k < n; k++ {
		out = append(out, photoJPEG(w, h, uint64(k)))
	}
	return out
}

func frameFor(pixels float64) (w, h int) {
	h = int(math.Sqrt(pixels / 1.5))
	return h * 3 / 2, h
}

func photoJPEG(w, h int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			v := uint8(rng.IntN(64))
			img.SetNRGBA(x, y, color.NRGBA{uint8(x*190/w) + v, uint8(y*190/h) + v, 90 + v, 255})
		}
	}
	var buf bytes.Buffer
	_ = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 92})
	return buf.Bytes()
}

func readTokenLines(path string) ([]string, error) {
	if path == "" {
		return nil, errors.New("-tokens is required (loadgen seed -writers N -tokens FILE)")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no token", path)
	}
	return out, sc.Err()
}
