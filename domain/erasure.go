package domain

// ErasedAccount is what deleting an account removed (inkwell users delete), for the operator.
type ErasedAccount struct {
	UserID    int64
	Username  string
	Articles  int // its own, in every status, with their comments, likes and counters
	Comments  int // it wrote, on anyone's article
	Likes     int // it gave: the liked articles' counts went down
	Folders   int // its collection folders: their articles' collect counts went down
	Followers int // who followed it
	Following int // whom it followed
}
