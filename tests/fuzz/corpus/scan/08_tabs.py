class T:
	def a(self):
		return 1
	def b(self):
		if True:
			return 2
		return 3
def top(): pass
