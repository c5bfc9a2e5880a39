class T:
        def a(self):
	    return 1
	def b(self):
		return 2
