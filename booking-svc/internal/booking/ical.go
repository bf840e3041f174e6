package booking

import "context"

// PropertyByCode returns the live property of account with internal code code from the
// property view; ErrNoProperty when there is none.
func (s *Service) PropertyByCode(ctx context.Context, account, code string) (Property, error) {
	return s.propertyView.PropertyByCode(ctx, account, code)
}
