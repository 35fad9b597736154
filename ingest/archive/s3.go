package archive

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"
)

// S3Config says where archives are uploaded. Credentials come from the AWS default
// chain (environment, shared files, SSO, instance or container role), never from here.
type S3Config struct {
	Bucket   string `yaml:"bucket"`
	Prefix   string `yaml:"prefix"`   // key prefix; the run id and the file's path follow
	Region   string `yaml:"region"`   // default: from the AWS configuration
	Endpoint string `yaml:"endpoint"` // an S3-compatible service (MinIO, …); default AWS
	// PathStyle addresses the bucket in the path (http://host/bucket/key), as most
	// S3-compatible services need.
	PathStyle bool `yaml:"path_style"`
}

// Enabled reports whether uploads are configured.
func (c S3Config) Enabled() bool { return c.Bucket != "" }

// Validate checks the fields, without network I/O.
func (c S3Config) Validate() error {
	var errs []error
	if c.Bucket == "" && (c.Prefix != "" || c.Endpoint != "" || c.Region != "" || c.PathStyle) {
		errs = append(errs, errors.New("archive.s3.bucket is required when archive.s3 is set"))
	}
	if c.Endpoint != "" && !strings.HasPrefix(c.Endpoint, "http://") && !strings.HasPrefix(c.Endpoint, "https://") {
		errs = append(errs, fmt.Errorf("archive.s3.endpoint: %q is not an http(s) URL", c.Endpoint))
	}
	if strings.HasPrefix(c.Prefix, "/") {
		errs = append(errs, fmt.Errorf("archive.s3.prefix: %q must not start with /", c.Prefix))
	}
	return errors.Join(errs...)
}

// ObjectKey is the key of an archive file: prefix/run_id/relative path.
func (c S3Config) ObjectKey(runID, rel string) string {
	return path.Join(strings.Trim(c.Prefix, "/"), runID, filepath.ToSlash(rel))
}

// Upload puts every file of the archive in dir to the bucket under
// prefix/<run id>/, the manifest last (so a listed manifest means a whole archive).
// It returns the number of objects written.
func Upload(ctx context.Context, dir string, c S3Config) (int, error) {
	if !c.Enabled() {
		return 0, errors.New("archive: S3 upload: no bucket configured")
	}
	a, err := Open(dir)
	if err != nil {
		return 0, err
	}
	// The SDK's own warnings (IMDSv1 fallback off EC2) stay out of the terminal:
	// an upload failure is reported with its error.
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithLogger(logging.Nop{})}
	if c.Region != "" {
		opts = append(opts, awsconfig.WithRegion(c.Region))
	}
	ac, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return 0, fmt.Errorf("archive: S3 upload: AWS configuration: %w", err)
	}
	client := s3.NewFromConfig(ac, func(o *s3.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
		o.UsePathStyle = c.PathStyle
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	})
	var files []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel != ManifestName {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("archive: S3 upload: %w", err)
	}
	sort.Strings(files)
	files = append(files, ManifestName)
	for i, rel := range files {
		if err := put(ctx, client, c, a.Manifest.RunID, dir, rel); err != nil {
			return i, err
		}
	}
	return len(files), nil
}

// put uploads one archive file, streamed from disk (a recorded offer file is
// hundreds of megabytes compressed).
func put(ctx context.Context, client *s3.Client, c S3Config, runID, dir, rel string) error {
	f, err := os.Open(filepath.Join(dir, rel))
	if err != nil {
		return fmt.Errorf("archive: S3 upload: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("archive: S3 upload: %w", err)
	}
	ctype := "application/json"
	if strings.HasSuffix(rel, ".gz") {
		ctype = "application/gzip"
	}
	key := c.ObjectKey(runID, rel)
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(c.Bucket), Key: aws.String(key), Body: f,
		ContentType: aws.String(ctype), ContentLength: aws.Int64(fi.Size()),
	}); err != nil {
		return fmt.Errorf("archive: S3 upload s3://%s/%s: %w", c.Bucket, key, err)
	}
	return nil
}
