"""The public autodiff API: GradOperation, grad, value_and_grad and friends."""
