package inkwell

import (
	"context"
	"fmt"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// Until the media store (repository/mediastore, branch media-store) is merged, the upload use
// cases are wired to this stand-in, which refuses every upload with 503. Merging it: delete this
// file, drop NewUnwiredMediaStore from rootSet and bind the store's type to service.MediaStore.

type unwiredMedia struct{}

// NewUnwiredMediaStore is the stand-in media store.
func NewUnwiredMediaStore() service.MediaStore { return unwiredMedia{} }

func (unwiredMedia) Put(context.Context, string, string, []byte) error {
	return fmt.Errorf("%w: no media store is wired", domain.ErrUnavailable)
}

func (unwiredMedia) Delete(context.Context, string) error {
	return fmt.Errorf("%w: no media store is wired", domain.ErrUnavailable)
}
