package aws

import (
	"fmt"
	"log/slog"

	"github.com/aws/smithy-go/logging"
)

// SDKLogger sends the AWS SDK's own log lines (such as the credential chain's
// "falling back to IMDSv1" warning off EC2) to log at debug level: they are details
// of a failure that gpuprice reports itself, and must not reach a user's terminal
// unless asked for with --log-level debug. A nil log discards them.
func SDKLogger(log *slog.Logger) logging.Logger {
	return logging.LoggerFunc(func(c logging.Classification, format string, v ...interface{}) {
		if log != nil {
			log.Debug(fmt.Sprintf(format, v...), "aws_sdk", string(c))
		}
	})
}
