package inkwell

import (
	"context"
	"fmt"
	"io"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// Until the image pipeline (media/, branch media-image) and the media store
// (repository/mediastore, branch media-store) are merged, the upload use cases are wired to these
// stand-ins, which refuse every upload with 503. Merging them: delete this file, drop
// NewUnwiredImageProcessor and NewUnwiredMediaStore from rootSet and bind *media.Processor to
// service.ImageProcessor and the store's type to service.MediaStore in wire.go.

type unwiredMedia struct{}

// NewUnwiredImageProcessor is the stand-in image processor.
func NewUnwiredImageProcessor() service.ImageProcessor { return unwiredMedia{} }

// NewUnwiredMediaStore is the stand-in media store.
func NewUnwiredMediaStore() service.MediaStore { return unwiredMedia{} }

func (unwiredMedia) Process(context.Context, io.Reader, int64) (domain.ProcessedImage, error) {
	return domain.ProcessedImage{}, fmt.Errorf("%w: no image processor is wired", domain.ErrUnavailable)
}

func (unwiredMedia) Put(context.Context, string, string, []byte) error {
	return fmt.Errorf("%w: no media store is wired", domain.ErrUnavailable)
}

func (unwiredMedia) Delete(context.Context, string) error {
	return fmt.Errorf("%w: no media store is wired", domain.ErrUnavailable)
}
