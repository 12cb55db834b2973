package media

import (
	"encoding/binary"

	"github.com/inkwell-dev/inkwell/domain"
)

// walkGIF counts a GIF's frames and adds up their pixels by walking its block structure, without
// decoding anything: the header and logical screen descriptor (and global color table), then
// blocks until the trailer (0x3B): an extension (0x21, a label, data sub-blocks) is skipped; an
// image descriptor (0x2C) is one frame (its local color table, the LZW code size and its data
// sub-blocks skipped). It stops as soon as the frames are over domain.MaxGIFFrames. A file that
// ends inside a block, has an unknown block or no frame is unreadable; one that ends after a
// complete block without a trailer is accepted here (decoders tolerate that).
func walkGIF(data []byte) (frames int, pixels int64, err error) {
	const screen = 6 + 7 // header, logical screen descriptor
	if len(data) < screen {
		return 0, 0, unreadable(formatGIF)
	}
	i := screen
	if packed := data[10]; packed&0x80 != 0 {
		i += 3 << (packed&7 + 1)
	}
	for i < len(data) {
		switch data[i] {
		case 0x3B: // trailer
			return done(frames, pixels)
		case 0x21: // extension: label, then data sub-blocks
			if i+2 > len(data) {
				return 0, 0, unreadable(formatGIF)
			}
			if i, err = skipSubBlocks(data, i+2); err != nil {
				return 0, 0, err
			}
		case 0x2C: // image descriptor: left, top, width, height, packed
			if i+10 > len(data) {
				return 0, 0, unreadable(formatGIF)
			}
			w := int64(binary.LittleEndian.Uint16(data[i+5:]))
			h := int64(binary.LittleEndian.Uint16(data[i+7:]))
			packed := data[i+9]
			i += 10
			if packed&0x80 != 0 {
				i += 3 << (packed&7 + 1)
			}
			i++ // LZW minimum code size
			if i > len(data) {
				return 0, 0, unreadable(formatGIF)
			}
			if i, err = skipSubBlocks(data, i); err != nil {
				return 0, 0, err
			}
			frames++
			pixels += w * h
			if frames > maxGIFFramesCounted {
				return frames, pixels, nil // over the limit: no need to read on
			}
		default:
			return 0, 0, unreadable(formatGIF)
		}
	}
	return done(frames, pixels)
}

// maxGIFFramesCounted is where walkGIF stops counting: one more than the limit says "too many".
const maxGIFFramesCounted = domain.MaxGIFFrames + 1

func done(frames int, pixels int64) (int, int64, error) {
	if frames == 0 {
		return 0, 0, unreadable(formatGIF)
	}
	return frames, pixels, nil
}

// skipSubBlocks returns the index just after the data sub-blocks that start at i (each a length
// byte and that many bytes; a zero length ends them).
func skipSubBlocks(data []byte, i int) (int, error) {
	for {
		if i >= len(data) {
			return 0, unreadable(formatGIF)
		}
		n := int(data[i])
		i++
		if n == 0 {
			return i, nil
		}
		i += n
	}
}
